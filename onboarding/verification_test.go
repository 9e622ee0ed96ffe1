package onboarding_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// signedOut returns the primary participant's visitor before sign-in.
func (e *formEnv) signedOut(id string) *onboarding.Visitor {
	e.t.Helper()
	v := e.primary(id)
	v.SignedIn = false
	return v
}

// wrongCode returns a 6-digit code that is not code.
func wrongCode(code string) string {
	b := []byte(code)
	b[5] = '0' + (b[5]-'0'+1)%10
	return string(b)
}

func TestSendVerificationCode(t *testing.T) {
	tests := []struct {
		name      string
		opts      formOptions
		mailFail  error
		before    func(p *onboarding.Participant) // the participant as the visitor reads it
		meanwhile func(a *onboarding.Application)
		wantErr   error
		wantSent  int // the participant's count of codes today after the call
		stored    bool
	}{
		{name: "sends a code", wantSent: 1, stored: true},
		{
			name:    "asking again too soon",
			before:  func(p *onboarding.Participant) { p.VerifyCodeSentAt = formNow.Add(-10 * time.Second) },
			wantErr: onboarding.ErrCodeResendTooSoon(20 * time.Second),
		},
		{
			name: "a code another browser asked for meanwhile",
			meanwhile: func(a *onboarding.Application) {
				a.Participants[0].VerifyCodeSentAt = formNow.Add(-500 * time.Millisecond)
			},
			wantErr: onboarding.ErrCodeResendTooSoon(30 * time.Second),
		},
		{
			name: "asking again after the pause",
			before: func(p *onboarding.Participant) {
				p.VerifyCodeSentAt, p.VerifyWindowStart, p.VerifyCodesSent = formNow.Add(-30*time.Second), formNow.Add(-time.Hour), 3
			},
			wantSent: 4, stored: true,
		},
		{
			name: "too many codes today",
			before: func(p *onboarding.Participant) {
				p.VerifyCodeSentAt, p.VerifyWindowStart, p.VerifyCodesSent = formNow.Add(-time.Minute), formNow.Add(-time.Hour), onboarding.VerifyCodesPerDay
			},
			wantErr: onboarding.ErrTooManyCodes,
		},
		{
			name: "a new day starts a new count",
			before: func(p *onboarding.Participant) {
				p.VerifyCodeSentAt, p.VerifyWindowStart, p.VerifyCodesSent = formNow.Add(-time.Minute), formNow.Add(-24*time.Hour), onboarding.VerifyCodesPerDay
			},
			wantSent: 1, stored: true,
		},
		{name: "no mailer", opts: formOptions{noMailer: true}, wantErr: onboarding.ErrCodeSendFailed},
		{name: "the email fails after the code is stored", mailFail: errors.New("smtp down"), wantErr: onboarding.ErrCodeSendFailed, wantSent: 1, stored: true},
		{
			name:      "a participant removed meanwhile",
			meanwhile: func(a *onboarding.Application) { a.Participants[0].ID = "someone-else" },
			wantErr:   onboarding.ErrFormNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t, tt.opts)
			id := e.create()
			if tt.before != nil {
				e.seed(id, func(a *onboarding.Application) { tt.before(&a.Participants[0]) })
			}
			v := e.signedOut(id)
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			e.mail.setFail(tt.mailFail)
			stale := *v.Participant
			before := len(e.activity(id))
			err := e.svc.SendVerificationCode(context.Background(), v)
			checkErr(t, err, tt.wantErr)
			if v.SignedIn {
				t.Errorf("sending a code signed the visitor in")
			}
			p := e.app(id).Participants[0]
			if !tt.stored {
				e.checkActivity(id, before, nil)
				if tt.meanwhile == nil && !cmp.Equal(stale, p) {
					t.Errorf("a refused send changed the participant: %s", cmp.Diff(stale, p))
				}
				return
			}
			got := [4]any{len(p.VerifyCodeHash) > 0, p.VerifyCodeExpires, p.VerifyCodeSentAt, p.VerifyCodesSent}
			want := [4]any{true, formNow.Add(onboarding.VerifyCodeTTL), formNow, tt.wantSent}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stored code (has hash, expires, sent at, sent today) (-want +got):\n%s", diff)
			}
			if p.VerifyAttempts != 0 {
				t.Errorf("a new code kept %d wrong attempts", p.VerifyAttempts)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionVerificationSent, "")})
			if tt.mailFail != nil {
				return
			}
			code := e.mail.lastCode(t)
			wantMail := onboarding.VerificationCode{To: onboarding.Recipient{Email: "primary@example.com", Name: "Pat Primary"}, OrgName: "Acme Payments", Code: code, ValidFor: 10 * time.Minute}
			if diff := cmp.Diff(wantMail, e.mail.messages()[len(e.mail.messages())-1]); diff != "" || len(code) != 6 || wrongCode(code) == code {
				t.Errorf("email (-want +got):\n%s\ncode %q", diff, code)
			}
		})
	}
}

// TestVerificationCodesPerDay checks the daily limit by sending codes at
// the fastest pace allowed.
func TestVerificationCodesPerDay(t *testing.T) {
	e := newFormEnv(t)
	id := e.create()
	v := e.signedOut(id)
	ctx := context.Background()
	for i := range onboarding.VerifyCodesPerDay {
		checkErr(t, e.svc.SendVerificationCode(ctx, v), nil)
		if i == 0 {
			e.clock.Advance(29 * time.Second)
			checkErr(t, e.svc.SendVerificationCode(ctx, v), onboarding.ErrCodeResendTooSoon(time.Second))
			e.clock.Advance(time.Second)
			continue
		}
		e.clock.Advance(30 * time.Second)
	}
	checkErr(t, e.svc.SendVerificationCode(ctx, v), onboarding.ErrTooManyCodes)
	e.clock.Advance(24*time.Hour - time.Duration(onboarding.VerifyCodesPerDay)*30*time.Second)
	checkErr(t, e.svc.SendVerificationCode(ctx, v), nil)
	if n := len(e.mail.messages()); n != 1+onboarding.VerifyCodesPerDay+1 {
		t.Errorf("%d emails sent, want the invite and %d codes", n, onboarding.VerifyCodesPerDay+1)
	}
}

func TestVerifyCodeRefusals(t *testing.T) {
	tests := []struct {
		name string
		// before runs with the code sent and returns the code to enter
		before       func(e *formEnv, v *onboarding.Visitor, code string) string
		wantErr      error
		wantAttempts int
	}{
		{name: "five digits", before: func(*formEnv, *onboarding.Visitor, string) string { return "12345" }, wantErr: onboarding.ErrCodeFormat},
		{name: "seven digits", before: func(*formEnv, *onboarding.Visitor, string) string { return "1234567" }, wantErr: onboarding.ErrCodeFormat},
		{name: "letters", before: func(*formEnv, *onboarding.Visitor, string) string { return "12a456" }, wantErr: onboarding.ErrCodeFormat},
		{name: "nothing", before: func(*formEnv, *onboarding.Visitor, string) string { return " " }, wantErr: onboarding.ErrCodeFormat},
		{name: "a wrong code", before: func(_ *formEnv, _ *onboarding.Visitor, c string) string { return wrongCode(c) }, wantErr: onboarding.ErrCodeWrong(4), wantAttempts: 1},
		{
			name: "the last try",
			before: func(e *formEnv, v *onboarding.Visitor, c string) string {
				e.seed(v.App.ID, func(a *onboarding.Application) { a.Participants[0].VerifyAttempts = 3 })
				return wrongCode(c)
			},
			wantErr: onboarding.ErrCodeWrong(1), wantAttempts: 4,
		},
		{
			name: "the fifth wrong code ends the code",
			before: func(e *formEnv, v *onboarding.Visitor, c string) string {
				e.seed(v.App.ID, func(a *onboarding.Application) { a.Participants[0].VerifyAttempts = 4 })
				return wrongCode(c)
			},
			wantErr: onboarding.ErrCodeExhausted, wantAttempts: 5,
		},
		{
			name: "the right code after five wrong ones",
			before: func(e *formEnv, v *onboarding.Visitor, c string) string {
				e.seed(v.App.ID, func(a *onboarding.Application) { a.Participants[0].VerifyAttempts = 5 })
				return c
			},
			wantErr: onboarding.ErrCodeExhausted, wantAttempts: 5,
		},
		{
			name: "the right code too late",
			before: func(e *formEnv, _ *onboarding.Visitor, c string) string {
				e.clock.Advance(onboarding.VerifyCodeTTL)
				return c
			},
			wantErr: onboarding.ErrCodeExpired,
		},
		{
			name: "no code was sent",
			before: func(e *formEnv, v *onboarding.Visitor, c string) string {
				e.seed(v.App.ID, func(a *onboarding.Application) { a.Participants[0].VerifyCodeHash = nil })
				return c
			},
			wantErr: onboarding.ErrNoCodeSent,
		},
		{
			name: "a participant removed meanwhile",
			before: func(e *formEnv, v *onboarding.Visitor, c string) string {
				e.seed(v.App.ID, func(a *onboarding.Application) { a.Participants[0].ID = "someone-else" })
				return c
			},
			wantErr: onboarding.ErrFormNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			v := e.signedOut(id)
			checkErr(t, e.svc.SendVerificationCode(context.Background(), v), nil)
			code := tt.before(e, v, e.mail.lastCode(t))
			before := len(e.activity(id))
			err := e.svc.VerifyCode(context.Background(), v, code)
			checkErr(t, err, tt.wantErr)
			e.checkActivity(id, before, nil)
			p := e.app(id).Participants[0]
			if v.SignedIn || p.Verified || v.SignedInNow || p.VerifyAttempts != tt.wantAttempts {
				t.Errorf("after a refused code: signed in %v, verified %v, signed in now %v, attempts %d; want none and %d attempts",
					v.SignedIn, p.Verified, v.SignedInNow, p.VerifyAttempts, tt.wantAttempts)
			}
			if e.app(id).Status != onboarding.StatusSent {
				t.Errorf("status = %s, want sent", e.app(id).Status)
			}
		})
	}
}

func TestErrCodeWrongMessages(t *testing.T) {
	for left, want := range map[int]string{
		4: "That code is not right. You have 4 more tries.",
		1: "That code is not right. You have 1 more try.",
	} {
		if got := onboarding.ErrCodeWrong(left).Message; got != want {
			t.Errorf("ErrCodeWrong(%d) = %q, want %q", left, got, want)
		}
	}
	if got, want := onboarding.ErrCodeResendTooSoon(1500*time.Millisecond).Message, "A code was sent moments ago. Wait 2 seconds before asking for another."; got != want {
		t.Errorf("ErrCodeResendTooSoon(1.5s) = %q, want %q", got, want)
	}
}

// TestVerifyCodeSignsIn checks that the right code signs the visitor in,
// ends earlier sessions and moves a created or sent application to
// in_progress, once.
func TestVerifyCodeSignsIn(t *testing.T) {
	tests := []struct {
		status     onboarding.Status
		wantOpened bool // the application.opened entry is recorded
	}{
		{onboarding.StatusCreated, true},
		{onboarding.StatusSent, true},
		{onboarding.StatusInProgress, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			e := newFormEnv(t)
			ctx := context.Background()
			id := e.create()
			e.seed(id, func(a *onboarding.Application) { a.Status = tt.status })
			v := e.signedOut(id)
			checkErr(t, e.svc.SendVerificationCode(ctx, v), nil)
			code := e.mail.lastCode(t)
			checkErr(t, e.svc.VerifyCode(ctx, v, wrongCode(code)), onboarding.ErrCodeWrong(4))
			before := len(e.activity(id))
			checkErr(t, e.svc.VerifyCode(ctx, v, " "+code[:3]+" "+code[3:]+"\n"), nil)

			want := []onboarding.Activity{did(v, onboarding.ActionVerified, "")}
			if tt.wantOpened {
				want = append(want, did(v, onboarding.ActionOpened, ""))
			}
			e.checkActivity(id, before, want)
			app := e.app(id)
			p := app.Participants[0]
			if app.Status != onboarding.StatusInProgress {
				t.Errorf("status = %s, want in_progress", app.Status)
			}
			if !p.Verified || p.SessionEpoch != 1 || p.VerifyCodeHash != nil || p.VerifyAttempts != 0 || p.VerifyCodesSent != 0 || p.OpenedAt == nil || !p.OpenedAt.Equal(formNow) {
				t.Errorf("participant after sign-in = %+v", p)
			}
			if !v.SignedIn || !v.SignedInNow {
				t.Errorf("visitor after sign-in: signed in %v, signed in now %v; want both (the server starts a session)", v.SignedIn, v.SignedInNow)
			}
			if v.App.Status != onboarding.StatusInProgress || v.Participant.SessionEpoch != 1 {
				t.Errorf("the visitor was not refreshed: status %s, epoch %d", v.App.Status, v.Participant.SessionEpoch)
			}

			// A later verification (another device) signs in again and
			// ends the earlier sessions, but the form was opened already.
			e.clock.Advance(time.Minute)
			again := e.signedOut(id)
			checkErr(t, e.svc.SendVerificationCode(ctx, again), nil)
			before = len(e.activity(id))
			checkErr(t, e.svc.VerifyCode(ctx, again, e.mail.lastCode(t)), nil)
			log := e.activity(id)[before:]
			if len(log) != 1 || log[0].Action != onboarding.ActionVerified {
				t.Errorf("second sign-in recorded %+v, want only %s", log, onboarding.ActionVerified)
			}
			p = e.app(id).Participants[0]
			if p.SessionEpoch != 2 || !p.OpenedAt.Equal(formNow) {
				t.Errorf("after the second sign-in: epoch %d, opened at %v; want 2 and the first open", p.SessionEpoch, p.OpenedAt)
			}
		})
	}
}
