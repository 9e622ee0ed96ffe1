package onboarding_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

func newService(t *testing.T, now func() time.Time) (*onboarding.Service, storetest.Store) {
	t.Helper()
	store := storetest.Open(t)
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Now: now, PageCounter: pdf.PageCount,
		Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: "std", Configs: []*onboarding.Configuration{
			{ID: "std", Form: onboarding.StandardForm(), Countries: []string{"FR"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store
}

func TestNewRejectsInconsistentOrganizations(t *testing.T) {
	store := storetest.Open(t)
	form := onboarding.StandardForm()
	for name, orgs := range map[string][]*onboarding.Organization{
		"duplicate organization": {{ID: "a"}, {ID: "a"}},
		"duplicate config":       {{ID: "a", Configs: []*onboarding.Configuration{{ID: "c", Form: form}}}, {ID: "b", Configs: []*onboarding.Configuration{{ID: "c", Form: form}}}},
		"config without form":    {{ID: "a", Configs: []*onboarding.Configuration{{ID: "c"}}}},
	} {
		if _, err := onboarding.New(onboarding.Options{Store: store, Organizations: orgs, PageCounter: pdf.PageCount}); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := onboarding.New(onboarding.Options{}); err == nil {
		t.Errorf("New without a store succeeded")
	}
	if _, err := onboarding.New(onboarding.Options{Store: store}); err == nil {
		t.Errorf("New without a PageCounter succeeded")
	}
}

func TestAPIKeyLifecycle(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	svc, store := newService(t, clock)

	key, k, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "  ci  ", ExpiresIn: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "ci" || !k.AllScopes || len(k.Scopes) != len(onboarding.AllScopes()) || !k.Has("a:scope:of:a:later:version") || k.ExpiresAt == nil || !k.ExpiresAt.Equal(now.Add(48*time.Hour)) {
		t.Errorf("created key = %+v", k)
	}
	stored, _ := store.APIKey(ctx, k.ClientID)
	if strings.Contains(string(stored.SecretHash), key[len("svc_")+17:]) {
		t.Errorf("the secret is stored in clear")
	}
	got, err := svc.Authenticate(ctx, key)
	if err != nil || got.ClientID != k.ClientID {
		t.Fatalf("Authenticate = %v, %v", got, err)
	}
	after, _ := store.APIKey(ctx, k.ClientID)
	if after.LastUsedAt == nil {
		t.Errorf("last used not recorded")
	}
	for _, bad := range []string{"", "svc_", key + "x", strings.Replace(key, "svc_", "sk_", 1), key[:len(key)-1], "svc_short.secret"} {
		if _, err := svc.Authenticate(ctx, bad); !errors.Is(err, onboarding.ErrInvalidAPIKey) {
			t.Errorf("Authenticate(%q) = %v, want ErrInvalidAPIKey", bad, err)
		}
	}
	if _, err := svc.RevokeAPIKey(ctx, k.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, key); !errors.Is(err, onboarding.ErrInvalidAPIKey) {
		t.Errorf("revoked key authenticated: %v", err)
	}
	if _, err := svc.RevokeAPIKey(ctx, "nope"); err == nil || err.Error() != "API key 'nope' not found" {
		t.Errorf("RevokeAPIKey(unknown) = %v", err)
	}

	key2, _, _ := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "short", ExpiresIn: time.Hour})
	if _, err := svc.Authenticate(ctx, key2); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if _, err := svc.Authenticate(ctx, key2); !errors.Is(err, onboarding.ErrInvalidAPIKey) {
		t.Errorf("expired key authenticated: %v", err)
	}

	for name, spec := range map[string]onboarding.KeySpec{
		"unknown organization 'nope'": {OrgID: "nope", Name: "x"},
		"a key name is required":      {OrgID: "acme", Name: " "},
		"a key name must not contain control characters such as tabs or line breaks": {OrgID: "acme", Name: "ci\nkey"},
		"the expiry must be a positive duration":                                     {OrgID: "acme", Name: "x", ExpiresIn: -time.Second},
	} {
		if _, _, err := svc.CreateAPIKey(ctx, spec); err == nil || err.Error() != name {
			t.Errorf("CreateAPIKey(%+v) = %v, want %q", spec, err, name)
		}
	}
	keys, err := svc.APIKeys(ctx, "acme")
	if err != nil || len(keys) != 2 {
		t.Errorf("APIKeys = %d keys, %v; want 2", len(keys), err)
	}
}

// TestAPIKeysStayInTheirEnvironment: a key works only in the environment
// it was created in (sandbox and production use separate keys),
// even when one data directory serves both in turn; a key made before keys
// had an environment works in either.
func TestAPIKeysStayInTheirEnvironment(t *testing.T) {
	ctx := context.Background()
	store := storetest.Open(t)
	service := func(env string) *onboarding.Service {
		svc, err := onboarding.New(onboarding.Options{
			Store: store, PageCounter: pdf.PageCount, Environment: env,
			Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: "std", Configs: []*onboarding.Configuration{
				{ID: "std", Form: onboarding.StandardForm(), Countries: []string{"FR"}},
			}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	envs := map[string]*onboarding.Service{"sandbox": service("sandbox"), "production": service("production"), "": service("")}
	for _, made := range []string{"sandbox", "production", ""} {
		key, k, err := envs[made].CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "made in " + made})
		if err != nil {
			t.Fatal(err)
		}
		if k.Environment != made {
			t.Errorf("a key made in %q has environment %q", made, k.Environment)
		}
		for _, used := range []string{"sandbox", "production"} {
			_, err := envs[used].Authenticate(ctx, key)
			if works := made == "" || made == used; works != (err == nil) {
				t.Errorf("a key made in %q, used in %s: %v", made, used, err)
			} else if err != nil && !errors.Is(err, onboarding.ErrInvalidAPIKey) {
				t.Errorf("a key made in %q, used in %s: %v, want ErrInvalidAPIKey", made, used, err)
			}
		}
	}
}

// TestRevokeWhileAuthenticating checks that a revoke racing with
// authentications is never undone by the key cache.
func TestRevokeWhileAuthenticating(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		svc, _ := newService(t, time.Now)
		key, k, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "race"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					svc.Authenticate(ctx, key)
				}
			}()
		}
		if _, err := svc.RevokeAPIKey(ctx, k.ClientID); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if _, err := svc.Authenticate(ctx, key); !errors.Is(err, onboarding.ErrInvalidAPIKey) {
			t.Fatalf("round %d: key still authenticates after revoke", i)
		}
	}
}
