package notify

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestRender(t *testing.T) {
	jane := onboarding.Recipient{Email: "jane@northwind.example", Name: "Jane Smith"}
	tests := []struct {
		name        string
		msg         onboarding.Message
		wantSubject string
		wantLink    string
		wantLines   []string
	}{
		{"invite", onboarding.Invite{To: jane, OrgName: "Acme Pay", Company: "Northwind Ltd", Link: "https://x/a/s"},
			"Acme Pay: complete your company onboarding", "https://x/a/s",
			[]string{"Hello Jane Smith,", "Acme Pay has asked you to complete the onboarding form for Northwind Ltd.", "https://x/a/s"}},
		{"invite without company or name", onboarding.Invite{To: onboarding.Recipient{Email: "a@b.example"}, OrgName: "Acme Pay", Link: "https://x/a/s"},
			"Acme Pay: complete your company onboarding", "https://x/a/s",
			[]string{"Hello,", "Acme Pay has asked you to complete an onboarding form for your company."}},
		{"collaborator", onboarding.CollaboratorInvite{To: onboarding.Recipient{Email: "tom@northwind.example", Name: "Tom"}, OrgName: "Acme Pay", Inviter: "Jane Smith", Link: "https://x/a/t"},
			"Acme Pay: help complete your company onboarding", "https://x/a/t",
			[]string{"Hello Tom,", "Jane Smith has asked you to help complete the Acme Pay onboarding form for their company.", "The link is yours alone"}},
		{"verification code", onboarding.VerificationCode{To: jane, OrgName: "Acme Pay", Code: "123456", ValidFor: 10 * time.Minute},
			"123456 is your Acme Pay verification code", "",
			[]string{"    123456", "It expires in 10 minutes."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Render(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			to := tt.msg.Recipient()
			if diff := cmp.Diff(Email{To: to.Email, ToName: to.Name, Subject: tt.wantSubject, Link: tt.wantLink}, Email{To: e.To, ToName: e.ToName, Subject: e.Subject, Link: e.Link}); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
			for _, line := range tt.wantLines {
				if !strings.Contains(e.Text, line) {
					t.Errorf("text lacks %q:\n%s", line, e.Text)
				}
			}
		})
	}
}

func TestSendFailureReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("notify: smtp x: RCPT: %w", &textproto.Error{Code: 554, Msg: "no such user jane@x"}), "the mail server refused the message (SMTP 554)"},
		{fmt.Errorf("notify: smtp x: connect: %w", context.DeadlineExceeded), "the mail server did not answer in time"},
		{errors.New("disk full"), "the mail transport failed"},
	}
	for _, tt := range tests {
		se, ok := errors.AsType[*onboarding.SendError](sendFailure(tt.err))
		if !ok || se.Reason != tt.want || !errors.Is(se, tt.err) {
			t.Errorf("sendFailure(%v) = %v, want reason %q wrapping the cause", tt.err, se, tt.want)
		}
		if strings.Contains(se.Reason, "jane@x") {
			t.Errorf("reason %q quotes the server's reply", se.Reason)
		}
	}
}
