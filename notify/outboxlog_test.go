package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestOutboxLogsNoSecrets sends each kind of message through the sandbox
// outbox and reads its log line: the recipient, the subject and the file,
// but never a verification code nor a link's slug, which only the file
// holds, nor the body.
func TestOutboxLogsNoSecrets(t *testing.T) {
	jane := onboarding.Recipient{Email: "jane@northwind.example", Name: "Jane Smith"}
	const code = "493817"
	tests := []struct {
		name string
		msg  onboarding.Message
		want map[string]any // the log line without time, level, msg and file
	}{
		{"invite", onboarding.Invite{To: jane, OrgName: "Acme Pay", Company: "Northwind Ltd", Link: "https://x/a/s"},
			map[string]any{"to": jane.Email, "subject": "Acme Pay: complete your company onboarding"}},
		{"collaborator", onboarding.CollaboratorInvite{To: jane, OrgName: "Acme Pay", Inviter: "Tom", Link: "https://x/a/t"},
			map[string]any{"to": jane.Email, "subject": "Acme Pay: help complete your company onboarding"}},
		{"verification code", onboarding.VerificationCode{To: jane, OrgName: "Acme Pay", Code: code, ValidFor: 10 * time.Minute},
			map[string]any{"to": jane.Email, "subject": "[code] is your Acme Pay verification code"}},
		{"receipt", onboarding.SubmissionReceipt{To: jane, OrgName: "Acme Pay", Company: "Northwind Ltd", Reference: "ONB-1", SubmittedAt: testNow()},
			map[string]any{"to": jane.Email, "subject": "Acme Pay: application sent (reference ONB-1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, logs := newTestOutbox(t)
			if err := o.Send(context.Background(), tt.msg); err != nil {
				t.Fatal(err)
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log %q: %v", logs, err)
			}
			file, _ := line["file"].(string)
			if filepath.Dir(file) != o.Dir() {
				t.Errorf("file %q is not in the outbox %s", file, o.Dir())
			}
			for _, k := range []string{"time", "level", "msg", "file"} {
				delete(line, k)
			}
			if diff := cmp.Diff(tt.want, line); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
			if strings.Contains(logs.String(), code) || strings.Contains(logs.String(), "Hello") || strings.Contains(logs.String(), "https://x/") {
				t.Errorf("the log holds a code or the body: %s", logs)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if _, isCode := tt.msg.(onboarding.VerificationCode); isCode && !bytes.Contains(raw, []byte(code)) {
				t.Errorf("the message file does not hold the code:\n%s", raw)
			}
		})
	}
}
