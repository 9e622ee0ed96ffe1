package onboarding_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// chainVectors are three entries of one log and their canonical JSON and
// hashes, computed independently of this package (Python's json.dumps with
// sort_keys, compact separators and ensure_ascii=False, which is RFC 8785
// for objects of strings, and hashlib.sha256); docs/api.md documents them
// so that partners can test their own verifier.
var chainVectors = []struct {
	entry     onboarding.LoggedActivity
	canonical string
	hash      string
}{
	{
		onboarding.LoggedActivity{Seq: ulid.MustParse("01KAJ6F4G0000000000000000A"), Activity: onboarding.Activity{
			At: time.Date(2026, 11, 21, 9, 30, 0, 123456789, time.UTC), Action: onboarding.ActionFieldsUpdated,
			Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1", Name: "ci key"}, Fields: []string{"industry", "website"}}},
		`{"action":"fields.updated","actor":{"id":"k1","name":"ci key","type":"api_key"},"at":"2026-11-21T09:30:00.123Z","detail":null,"fields":["industry","website"],"id":"act_01KAJ6F4G0000000000000000A"}`,
		"0a630ecc196d0c97c8f99ee026e363543bc41cd722f4d460a258f83b27659458",
	},
	{
		onboarding.LoggedActivity{Seq: ulid.MustParse("01KAJ6F4G0000000000000000B"), Activity: onboarding.Activity{
			At: time.Date(2026, 11, 21, 10, 31, 0, 0, time.FixedZone("CET", 3600)), Action: onboarding.ActionFormSaved,
			Actor: onboarding.Actor{Type: onboarding.ActorParticipant, ID: "8b9f7bd2-f5c6-41d8-8cc5-c23abfb71ccc", Name: "jane@example.com"}, Detail: "company"}},
		`{"action":"form.saved","actor":{"email":"jane@example.com","id":"8b9f7bd2-f5c6-41d8-8cc5-c23abfb71ccc","type":"applicant"},"at":"2026-11-21T09:31:00.000Z","detail":"company","fields":[],"id":"act_01KAJ6F4G0000000000000000B"}`,
		"10ae290c00f8ffabe44d43d5737de720542b57adac287547f06668ba6f5fc46d",
	},
	{
		onboarding.LoggedActivity{Seq: ulid.MustParse("01KAJ6F4G0000000000000000C"), Activity: onboarding.Activity{
			At: time.Date(2026, 11, 21, 9, 32, 0, 0, time.UTC), Action: onboarding.ActionDocumentForced,
			Actor: onboarding.Actor{Type: onboarding.ActorOperator}, Fields: []string{},
			Detail: "bank_statement: \"checked\" \\ by phone\n\tcaf\u00e9 <b>&</b> \u2028 \x01\x1f\b\f\r"}},
		"{\"action\":\"document.forced\",\"actor\":{\"type\":\"operator\"},\"at\":\"2026-11-21T09:32:00.000Z\"," +
			`"detail":"bank_statement: \"checked\" \\ by phone\n\tcafé <b>&</b> ` + "\u2028" + ` \u0001\u001f\b\f\r","fields":[],"id":"act_01KAJ6F4G0000000000000000C"}`,
		"7bc418b32e1d42285edb89574fa9d7f305218ac5319b970811119db4f374f999",
	},
}

const vectorSubject = "e6dacf7e-ad57-49c6-995a-093d1c6825e5"

func TestActivityChainVectors(t *testing.T) {
	if got, want := onboarding.ActivityChainStart(vectorSubject), "9a0c3e8558ec6bedc458a037eb102d4dc0ecadcb4cbff3538614d2628d51caf8"; got != want {
		t.Errorf("ActivityChainStart = %s, want %s", got, want)
	}
	prev := onboarding.ActivityChainStart(vectorSubject)
	for i, v := range chainVectors {
		view := v.entry.View()
		if diff := cmp.Diff(v.canonical, string(onboarding.CanonicalActivityJSON(&view))); diff != "" {
			t.Errorf("entry %d canonical JSON (-want +got):\n%s", i, diff)
		}
		if got := onboarding.ActivityHash(prev, &v.entry); got != v.hash {
			t.Errorf("entry %d hash = %s, want %s", i, got, v.hash)
		}
		prev = v.hash
	}
}

// TestCanonicalIsTheAPIFormSorted checks that the canonical JSON is the
// API's JSON of the entry without its hash, members sorted: what a
// partner re-serialises is what was hashed. encoding/json sorts map keys
// and, with HTML escaping off, escapes nothing else RFC 8785 does not, for
// strings without U+2028 and U+2029.
func TestCanonicalIsTheAPIFormSorted(t *testing.T) {
	entries := []onboarding.LoggedActivity{
		chainVectors[0].entry, chainVectors[1].entry,
		{Seq: ulid.MustParse("01KAJ6F4G0000000000000000D"), Activity: onboarding.Activity{At: time.Unix(0, 0), Action: onboarding.ActionCreated,
			Actor: onboarding.Actor{Type: onboarding.ActorSystem}, Detail: "invalid \xff UTF-8, tab\t, NUL \x00, <&> é 😀"}},
		{Seq: ulid.MustParse("01KAJ6F4G0000000000000000E"), Activity: onboarding.Activity{At: time.Unix(1, 0), Action: onboarding.ActionInviteSent,
			Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "c", Name: "name \"quoted\""}}, Hash: "ignored"},
	}
	for i, e := range entries {
		view := e.View()
		api, err := json.Marshal(view)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(api, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "hash")
		var sorted bytes.Buffer
		enc := json.NewEncoder(&sorted)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(sorted.Bytes(), []byte("\n"))
		if diff := cmp.Diff(string(want), string(onboarding.CanonicalActivityJSON(&view))); diff != "" {
			t.Errorf("entry %d (-sorted API JSON +canonical):\n%s", i, diff)
		}
	}
}

// TestEveryMemberIsHashed changes each member of an entry in turn: each
// change changes the hash, and so does another prev.
func TestEveryMemberIsHashed(t *testing.T) {
	base := chainVectors[0].entry
	prev := onboarding.ActivityChainStart(vectorSubject)
	h0 := onboarding.ActivityHash(prev, &base)
	changes := map[string]func(e *onboarding.LoggedActivity){
		"seq":        func(e *onboarding.LoggedActivity) { e.Seq[15]++ },
		"at":         func(e *onboarding.LoggedActivity) { e.At = e.At.Add(time.Millisecond) },
		"action":     func(e *onboarding.LoggedActivity) { e.Action = onboarding.ActionFormSaved },
		"actor type": func(e *onboarding.LoggedActivity) { e.Actor.Type = onboarding.ActorSystem },
		"actor id":   func(e *onboarding.LoggedActivity) { e.Actor.ID = "k2" },
		"actor name": func(e *onboarding.LoggedActivity) { e.Actor.Name = "other" },
		"fields":     func(e *onboarding.LoggedActivity) { e.Fields = []string{"website", "industry"} },
		"no fields":  func(e *onboarding.LoggedActivity) { e.Fields = nil },
		"detail":     func(e *onboarding.LoggedActivity) { e.Detail = "x" },
	}
	for name, change := range changes {
		e := base
		e.Fields = append([]string(nil), base.Fields...)
		change(&e)
		if onboarding.ActivityHash(prev, &e) == h0 {
			t.Errorf("changing the %s leaves the hash", name)
		}
	}
	if onboarding.ActivityHash(onboarding.ActivityChainStart("other"), &base) == h0 {
		t.Error("another prev leaves the hash")
	}
	// The stored Prev and Hash are not part of what is hashed.
	e := base
	e.Prev, e.Hash = "x", "y"
	if onboarding.ActivityHash(prev, &e) != h0 {
		t.Error("the stored links change the hash")
	}
}

// BenchmarkActivityHash is the cost of chaining one entry, which every
// append pays (create appends two or three).
func BenchmarkActivityHash(b *testing.B) {
	e := chainVectors[0].entry
	prev := onboarding.ActivityChainStart(vectorSubject)
	b.ReportAllocs()
	for b.Loop() {
		if onboarding.ActivityHash(prev, &e) == "" {
			b.Fatal("no hash")
		}
	}
}
