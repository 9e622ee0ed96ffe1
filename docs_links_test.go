package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks checks that every relative link of the repository's
// Markdown pages (README.md, CONTRIBUTING.md, docs/*.md) names a file that
// exists and, for a #anchor into a Markdown page, a heading of that page.
func TestDocsLinks(t *testing.T) {
	pages := []string{"README.md", "CONTRIBUTING.md"}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no pages under docs/")
	}
	pages = append(pages, docs...)
	for _, page := range pages {
		for _, problem := range brokenLinks(t, page) {
			t.Errorf("%s: %s", page, problem)
		}
	}
}

// TestDocsLinksFindsBrokenLinks checks the checker on a page with a link to
// a missing file and a link to a missing heading.
func TestDocsLinksFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	text := "# Title\n\n## A `code` heading, with punctuation!\n\n" +
		"[ok](#title) [ok](#a-code-heading-with-punctuation) [ok](page.md#title)\n" +
		"[missing file](nowhere.md) [missing heading](#nowhere)\n" +
		"```\n[inside a code block](ignored.md)\n```\n" +
		"`[inline code](ignored.md)` [web](https://example.com/x)\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := brokenLinks(t, page)
	want := []string{
		`link "nowhere.md": no such file`,
		`link "#nowhere": page.md has no heading with anchor "nowhere"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken links found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// mdLink matches an inline Markdown link or image: [text](target) with an
// optional "title" after the target.
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// inlineCode matches a code span, whose text is not Markdown.
var inlineCode = regexp.MustCompile("`+[^`]*`+")

// brokenLinks lists the relative links of page that do not resolve.
func brokenLinks(t *testing.T, page string) []string {
	t.Helper()
	var problems []string
	for _, target := range markdownLinks(t, page) {
		if isExternal(target) {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		resolved := page
		if file != "" {
			resolved = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			if _, err := os.Stat(resolved); err != nil {
				problems = append(problems, fmt.Sprintf("link %q: no such file", target))
				continue
			}
		}
		if anchor == "" || !strings.HasSuffix(resolved, ".md") {
			continue
		}
		anchors := headingAnchors(t, resolved)
		if !anchors[anchor] {
			problems = append(problems, fmt.Sprintf("link %q: %s has no heading with anchor %q",
				target, filepath.Base(resolved), anchor))
		}
	}
	return problems
}

// isExternal reports whether a link target leaves the repository (a URL
// with a scheme, or a protocol-relative one).
func isExternal(target string) bool {
	if strings.HasPrefix(target, "//") {
		return true
	}
	scheme, _, ok := strings.Cut(target, ":")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/#.")
}

// markdownLinks returns the targets of the inline links of a Markdown page,
// leaving out fenced code blocks and code spans.
func markdownLinks(t *testing.T, page string) []string {
	t.Helper()
	var targets []string
	for _, line := range markdownLines(t, page) {
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
	}
	return targets
}

// markdownLines returns the lines of a Markdown page outside fenced code
// blocks.
func markdownLines(t *testing.T, page string) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	fence := ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page, a repeated heading getting -1, -2 and so on.
func headingAnchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	anchors := make(map[string]bool)
	seen := make(map[string]int)
	for _, line := range markdownLines(t, page) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if len(line)-len(text) > 6 || (text != "" && text[0] != ' ' && text[0] != '\t') {
			continue
		}
		slug := headingSlug(text)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// headingSlug is GitHub's anchor for a heading: the text with links reduced
// to their words, lower-cased, with every character other than a letter, a
// digit, a space, a hyphen or an underscore removed and spaces turned into
// hyphens.
func headingSlug(heading string) string {
	heading = mdLink.ReplaceAllStringFunc(heading, func(link string) string {
		open := strings.Index(link, "[")
		end := strings.Index(link, "](")
		return link[open+1 : end]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
