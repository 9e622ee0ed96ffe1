package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserUploads is the documents page at both sizes: a document the
// register supplied is shown as provided, choosing a file uploads it in
// one step (with progress, announced, the page keeping its place), an
// uploaded file is one compact line with Replace and Remove, and a
// refused file is an error in the summary, linked to its input.
func TestBrowserUploads(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			s := startBrowserServer(t)
			created := s.createApplication(t, `{"primary_contact":{"email":"jo@northwind.example","name":"Jo Reed"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
			id := created["application_id"].(string)
			link := created["link"].(string)
			for deadline := time.Now().Add(30 * time.Second); s.application(t, id)["registry_documents_status"] == "pending"; {
				if time.Now().After(deadline) {
					t.Fatal("registry documents still pending after 30 s")
				}
				time.Sleep(100 * time.Millisecond) // polling for the fetch to finish, not proving an absence
			}
			jo := b.tab(t)
			jo.open(link + "?auth_code=" + created["pre_auth_code"].(string))
			jo.open(link + "/s/documents")
			jo.wantText("Provided by Companies House", "You do not need to upload it")
			if visible := jo.eval(`String(document.getElementById("upload-proof_of_address").offsetParent !== null)`); visible != "false" {
				jo.fail("the Upload button shows although choosing a file uploads it")
			}
			jo.wantFits()
			jo.shot("documents")

			// A person's document, scrolled to the middle of the screen:
			// choosing its file uploads it, and it stays where it was.
			key := jo.eval(`document.querySelector("section.doc[id^='doc-person_id_document-']").id.slice(4)`)
			pdf := fixturePDF(t)
			top := jo.placeMiddle("doc-" + key)
			jo.watchProgress()
			jo.upload(key, pdf)
			jo.wantKeptPlace("doc-"+key, top)
			if saw := jo.eval(`String(window.sawProgress === true)`); saw != "true" {
				jo.fail("no progress was shown during the upload")
			}
			if got := jo.eval(`document.getElementById("upload-announce").textContent`); got != "NwIncDoc10000001.pdf, uploaded" {
				jo.fail("announced %q, want the file uploaded", got)
			}
			if got := jo.focused(); got != "file-"+key+"-status" {
				jo.fail("focus after the upload is on %q, want the document's status", got)
			}
			compact := jo.eval(fmt.Sprintf(`(() => { const c = document.querySelector("#doc-%s .doc-actions").cloneNode(true);
				c.querySelectorAll(".visually-hidden").forEach(e => e.remove()); return c.textContent.replace(/\s+/g, " ").trim() })()`, key))
			if compact != "NwIncDoc10000001.pdf, uploaded · Replace · Remove" {
				jo.fail("the uploaded file reads %q", compact)
			}
			jo.wantTargets(fmt.Sprintf("#doc-%s .doc-actions button", key))

			// Replace opens the file chooser of the same document.
			jo.eval(fmt.Sprintf(`document.getElementById("file-%s").addEventListener("click", e => { window.chooser = e.target.id; e.preventDefault() }), ""`, key))
			jo.do("press Replace", chromedp.Click(byID("replace-"+key), chromedp.NodeVisible))
			if got := jo.eval(`String(window.chooser)`); got != "file-"+key {
				jo.fail("Replace opened %q, want the document's file chooser", got)
			}
			jo.upload(key, pdf)
			jo.wantText("NwIncDoc10000001.pdf, uploaded")

			// A refused file: an error in the summary at the top, out of
			// sight, while the page stays at the document.
			fake := filepath.Join(t.TempDir(), "statement.pdf")
			if err := os.WriteFile(fake, []byte("This is not a PDF, just some notes.\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			top = jo.placeMiddle("doc-bank_statement")
			jo.upload("bank_statement", fake)
			jo.wantKeptPlace("doc-bank_statement", top)
			jo.wantText("There is a problem", "Business bank statement: statement.pdf was not accepted. The file is not a PDF that can be opened:",
				"Not accepted", "statement.pdf: The file is not a PDF that can be opened:")
			if got := jo.eval(`document.getElementById("upload-announce").textContent`); !strings.Contains(got, "The file is not a PDF that can be opened") {
				jo.fail("announced %q, want the reason", got)
			}
			jo.wantTitleOfHeading("a refused upload")
			jo.wantFits()
			jo.shot("documents-rejected")
			jo.do("follow the summary link", chromedp.Click(`#error-summary a[href="#file-bank_statement"]`, chromedp.NodeVisible))
			if got := jo.focused(); got != "file-bank_statement" {
				jo.fail("the summary link focused %q, want the bank statement's file input", got)
			}

			// Replacing the refused file clears its error, summary included.
			jo.upload("bank_statement", pdf)
			if strings.Contains(jo.text(), "There is a problem") {
				jo.fail("the error summary stays after the refused file was replaced")
			}
			jo.wantFits()
			jo.shot("documents-uploaded")
		})
	}
}

// placeMiddle scrolls the element id to the middle of the screen and
// returns its distance from the top of the screen.
func (tb *tab) placeMiddle(id string) string {
	tb.t.Helper()
	return tb.eval(fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.scrollIntoView({block: "center"}); return String(Math.round(e.getBoundingClientRect().top)) })()`, id))
}

// wantKeptPlace asserts that the element id is still top pixels from the
// top of the screen (within a pixel), and that the page is not back at
// its start.
func (tb *tab) wantKeptPlace(id, top string) {
	tb.t.Helper()
	got := tb.eval(fmt.Sprintf(`String(Math.round(document.getElementById(%q).getBoundingClientRect().top))`, id))
	var want, have int
	fmt.Sscan(top, &want)
	fmt.Sscan(got, &have)
	if have < want-1 || have > want+1 || tb.eval(`String(window.scrollY)`) == "0" {
		tb.fail("#%s moved from %s px to %s px from the top of the screen (scrollY %s)", id, top, got, tb.eval(`String(window.scrollY)`))
	}
}

// watchProgress records in window.sawProgress whether an upload's
// progress bar shows.
func (tb *tab) watchProgress() {
	tb.t.Helper()
	tb.eval(`new MutationObserver(() => { if (document.querySelector(".progress:not([hidden])")) window.sawProgress = true })
		.observe(document.body, {subtree: true, attributes: true, attributeFilter: ["hidden"]}), ""`)
}
