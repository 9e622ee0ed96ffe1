package config

import (
	"fmt"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"onboard/notify"
	"onboard/onboarding"
)

var (
	idPattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	countryPattern = regexp.MustCompile(`^[A-Z]{2}$`)
	hostPattern    = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)
)

// Validate checks the whole configuration and reports every problem at once,
// each naming the key to fix: the file's unknown keys first, then its values
// of the wrong type, then table by table in the order of the file.
func (c *Config) Validate() error {
	var p onboarding.Problems
	for _, k := range c.unknown {
		p.Note("unknown", "unknown key %s (config.example.toml lists every key)", k)
	}
	for _, b := range c.badTypes {
		p.Note("types", "%s", b)
	}
	c.validateServer(&p)
	c.Registry.validate(c.Environment, &p)
	c.Mail.validate(c.Environment, &p)
	c.Limits.validate(&p)
	c.Webhooks.validate(&p)
	c.Storage.validate(&p)
	c.Blobs.validate(&p)
	c.Metrics.validate(c.Listen, &p)
	validateOrganizations(c.Organizations, c.Environment, c.formProblem, &p)
	return p.Err()
}

// validateServer checks the top-level keys: environment, listen, public_url
// and data_dir.
func (c *Config) validateServer(p *onboarding.Problems) {
	if c.Environment != "sandbox" && c.Environment != "production" {
		p.Note("server", "environment must be \"sandbox\" or \"production\", not %q", c.Environment)
	}
	checkListen("server", "listen", c.Listen, p)
	c.checkPublicURL(p)
	if c.DataDir == "" {
		p.Note("server", "data_dir must not be empty")
	}
	if _, err := c.ProxyPrefixes(); err != nil {
		p.Note("server", "%v", err)
	}
}

// checkPublicURL checks public_url, the base of applicant links: an
// absolute http or https URL without user information (links, e-mails and
// config check would show it), query or fragment, not even an empty "?" or
// "#", since links are its text followed by their path.
func (c *Config) checkPublicURL(p *onboarding.Problems) {
	u, err := url.Parse(c.PublicURL)
	switch {
	case c.PublicURL == "" && c.Environment == "production":
		p.Note("server", "public_url is required in production: applicant links must use the address applicants reach")
	case c.PublicURL == "":
		// Links follow listen.
	case (err != nil || u.User != nil) && strings.Contains(c.PublicURL, "@"):
		// Not quoted: the password would be shown.
		p.Note("server", "public_url must not contain a user name or password: applicant links and e-mails would show them")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(c.PublicURL, "?#"):
		p.Note("server", "public_url %q must be an absolute http or https URL without query or fragment", c.PublicURL)
	}
}

// ProxyPrefixes parses trusted_proxies: each an address (one host) or a
// CIDR prefix.
func (c *Config) ProxyPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		if pr, err := netip.ParsePrefix(s); err == nil {
			out = append(out, pr.Masked())
			continue
		}
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted_proxies: %q is neither an IP address nor a CIDR prefix such as 10.0.0.0/8", s)
		}
		out = append(out, netip.PrefixFrom(addr, addr.BitLen()))
	}
	return out, nil
}

// validate checks the [registry] table; environment is the configuration's.
func (r *Registry) validate(environment string, p *onboarding.Problems) {
	switch r.Mode {
	case "fixtures":
		if environment == "production" {
			p.Note("registry", "registry.mode \"fixtures\" answers from the sandbox's recorded companies: production needs registry.mode = \"live\" with its credentials")
		}
	case "live":
		if r.CompaniesHouseAPIKey == "" || r.CROEmail == "" || r.CROAPIKey == "" {
			p.Note("registry", "registry.mode \"live\" needs registry.companies_house_api_key, registry.cro_email and registry.cro_api_key")
		}
	default:
		p.Note("registry", "registry.mode must be \"fixtures\" or \"live\", not %q", r.Mode)
	}
	for _, u := range []struct{ key, value string }{
		{"registry.companies_house_url", r.CompaniesHouseURL},
		{"registry.cro_url", r.CROURL},
	} {
		if u.value == "" {
			continue // the registry's own address
		}
		parsed, err := url.Parse(u.value)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" ||
			parsed.User != nil || parsed.RawQuery != "" || parsed.Fragment != "" {
			p.Note("registry", "%s must be an absolute http or https URL without credentials, query or fragment", u.key)
		} else if environment == "production" && parsed.Scheme != "https" {
			p.Note("registry", "%s must be an https URL in production: registry credentials travel with every request", u.key)
		}
	}
	if r.Timeout.check("registry.timeout", p) && (r.Timeout.Duration < time.Millisecond || r.Timeout.Duration > time.Minute) {
		p.Note("registry", "registry.timeout must be between 1ms and 1m, not %s", r.Timeout)
	}
}

// validate checks the [mail] table; environment is the configuration's.
func (m *Mail) validate(environment string, p *onboarding.Problems) {
	if m.SMTPURL != "" {
		if u, err := url.Parse(m.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			p.Note("mail", "mail.smtp_url must look like smtp://user:pass@host:587 or smtps://user:pass@host:465")
		} else if msg := smtpURLProblem(m.SMTPURL); msg != "" {
			p.Note("mail", "%s", msg)
		}
		if m.From == "" {
			p.Note("mail", "mail.from is required when mail.smtp_url is set")
		}
	} else if m.From == "" && environment == "sandbox" {
		p.Note("mail", "mail.from is required in sandbox: the outbox writes messages from it")
	}
	if m.From != "" {
		if _, err := mail.ParseAddress(m.From); err != nil || strings.ContainsAny(m.From, "\r\n") {
			p.Note("mail", "mail.from %q is not an email address such as \"Onboarding <onboarding@example.com>\"", m.From)
		}
	}
}

// smtpSender stands for mail.from when smtpURLProblem asks the mail
// transport about the URL alone: validate checks mail.from itself.
const smtpSender = "onboard@example.invalid"

// smtpURLProblem is what serve's mail transport (notify.NewSMTP, which
// connects to nothing when built) finds wrong with rawURL, said of
// mail.smtp_url; "" when nothing. Its messages never contain the password.
func smtpURLProblem(rawURL string) string {
	_, err := notify.NewSMTP(rawURL, smtpSender, notify.SMTPOptions{})
	if err == nil {
		return ""
	}
	if rest, ok := strings.CutPrefix(err.Error(), "notify: smtp URL "); ok {
		return "mail.smtp_url " + rest
	}
	return "mail.smtp_url: " + err.Error()
}

// validate checks the [limits] table.
func (l *Limits) validate(p *onboarding.Problems) {
	if l.RatePerSecond < 0 {
		p.Note("limits", "limits.rate_per_second must be 0 (no limit) or more")
	}
	if l.RatePerSecond > 0 && l.Burst < 1 {
		p.Note("limits", "limits.burst must be at least 1")
	}
	if l.MaxJSONBytes < 1024 {
		p.Note("limits", "limits.max_json_bytes must be at least 1024")
	}
	if l.MaxUploadBytes < 1024 {
		p.Note("limits", "limits.max_upload_bytes must be at least 1024")
	}
	if l.MaxMappedBytes != 0 && l.MaxMappedBytes < 1<<20 {
		p.Note("limits", "limits.max_mapped_bytes must be 0 (no limit) or at least 1048576")
	}
	if l.SessionTimeout.check("limits.session_timeout", p) && (l.SessionTimeout.Duration < 10*time.Second || l.SessionTimeout.Duration > 7*24*time.Hour) {
		p.Note("limits", "limits.session_timeout must be between 10s and 168h, not %s", l.SessionTimeout)
	}
}

// validate checks the [webhooks] table.
func (w *Webhooks) validate(p *onboarding.Problems) {
	switch {
	case len(w.RetrySchedule) == 0:
		p.Note("webhooks", "webhooks.retry_schedule must list at least one attempt")
	case w.RetrySchedule[0].Duration != notADuration && w.RetrySchedule[0].Duration != 0:
		p.Note("webhooks", "webhooks.retry_schedule[0] must be \"0s\": the first attempt is made as soon as the event commits")
	}
	for i, d := range w.RetrySchedule {
		if d.check(fmt.Sprintf("webhooks.retry_schedule[%d]", i), p) && d.Duration < 0 {
			p.Note("webhooks", "webhooks.retry_schedule[%d] must not be negative", i)
		}
	}
	if w.Timeout.check("webhooks.timeout", p) && w.Timeout.Duration <= 0 {
		p.Note("webhooks", "webhooks.timeout must be positive")
	}
}

// validate checks the [metrics] table; listen is the API's address.
func (m *Metrics) validate(listen string, p *onboarding.Problems) {
	if m.Listen == "" {
		return
	}
	if checkListen("metrics", "metrics.listen", m.Listen, p) && m.Listen == listen && !strings.HasSuffix(listen, ":0") {
		p.Note("metrics", "metrics.listen %q is the API's listen address: leave it empty to serve /metrics there", m.Listen)
	}
}

// orgIDs are the ids already seen across [[organizations]]: configuration
// and rfi agent ids are unique over the whole file, not only within their
// organization. It also loads each form once.
type orgIDs struct {
	orgs    map[string]bool
	configs map[string]string // configuration id → its organization's id
	agents  map[string]bool
	forms   map[string]bool    // form references loaded: each is reported once
	load    func(string) error // loads a form reference, for its problem
}

// formProblem loads the form ref (standard, or a file relative to the
// configuration's) as serve loads it, and returns what is wrong with it.
func (c *Config) formProblem(ref string) error {
	_, err := c.loadForm(ref)
	return err
}

// validateOrganizations checks the [[organizations]] entries with their
// configurations and rfi agents, for environment, loading each form with
// loadForm.
func validateOrganizations(orgs []Organization, environment string, loadForm func(string) error, p *onboarding.Problems) {
	if len(orgs) == 0 {
		p.Note("organizations", "at least one [[organizations]] entry is required")
	}
	seen := orgIDs{orgs: map[string]bool{}, configs: map[string]string{}, agents: map[string]bool{},
		forms: map[string]bool{}, load: loadForm}
	for i := range orgs {
		orgs[i].validate(environment, &seen, p)
	}
}

// validate checks one [[organizations]] entry.
func (o *Organization) validate(environment string, seen *orgIDs, p *onboarding.Problems) {
	where := fmt.Sprintf("organization %q", o.ID)
	if !idPattern.MatchString(o.ID) {
		p.Note("organizations", "%s: id must be 1-63 lower-case letters, digits, '-' or '_'", where)
	}
	if seen.orgs[o.ID] {
		p.Note("organizations", "%s: duplicate organization id", where)
	}
	seen.orgs[o.ID] = true
	if o.CustomDomain != "" && !hostPattern.MatchString(o.CustomDomain) {
		p.Note("organizations", "%s: custom_domain %q is not a host name", where, o.CustomDomain)
	}
	if o.CustomDomainActive && o.CustomDomain == "" {
		p.Note("organizations", "%s: custom_domain_active needs custom_domain", where)
	}
	if o.TermsURL != "" {
		u, err := url.Parse(o.TermsURL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil:
			p.Note("organizations", "%s: terms_url %q must be an absolute http or https URL without credentials", where, o.TermsURL)
		case environment == "production" && u.Scheme != "https":
			p.Note("organizations", "%s: terms_url must be an https URL in production", where)
		}
	}
	own := map[string]bool{}
	for i := range o.Configs {
		ac := &o.Configs[i]
		ac.validate(where, o.ID, seen, p)
		own[ac.ID] = true
	}
	if o.DefaultConfig != "" && !own[o.DefaultConfig] {
		p.Note("organizations", "%s: default_config %q is not one of its configurations", where, o.DefaultConfig)
	}
	defaults := 0
	for i := range o.RFIAgents {
		a := &o.RFIAgents[i]
		a.validate(where, seen, p)
		if a.Default {
			defaults++
		}
	}
	if defaults > 1 {
		p.Note("organizations", "%s: at most one rfi agent may be the default", where)
	}
}

// validate checks one [[organizations.configs]] entry of organization orgID,
// whose problems start with where.
func (ac *AppConfig) validate(where, orgID string, seen *orgIDs, p *onboarding.Problems) {
	cw := fmt.Sprintf("%s: configuration %q", where, ac.ID)
	if !idPattern.MatchString(ac.ID) {
		p.Note(where, "%s: id must be 1-63 lower-case letters, digits, '-' or '_'", cw)
	}
	if prev, dup := seen.configs[ac.ID]; dup {
		p.Note(where, "%s: duplicate configuration id (also in organization %q); configuration ids are global", cw, prev)
	}
	seen.configs[ac.ID] = orgID
	switch {
	case ac.Form == "":
		p.Note(where, "%s: form is required (\"standard\" or a path to a form file)", cw)
	case !seen.forms[ac.Form]:
		seen.forms[ac.Form] = true
		if err := seen.load(ac.Form); err != nil {
			p.Note(where, "%s: %v", cw, err)
		}
	}
	if len(ac.Countries) == 0 {
		p.Note(where, "%s: countries must list at least one ISO 3166-1 alpha-2 code", cw)
	}
	listed := map[string]bool{}
	for _, k := range ac.Countries {
		if !countryPattern.MatchString(k) {
			p.Note(where, "%s: country %q must be an upper-case ISO 3166-1 alpha-2 code", cw, k)
		}
		if listed[k] {
			p.Note(where, "%s: country %q is listed twice", cw, k)
		}
		listed[k] = true
	}
}

// validate checks one [[organizations.rfi_agents]] entry; its problems
// start with where, its organization.
func (a *RFIAgent) validate(where string, seen *orgIDs, p *onboarding.Problems) {
	aw := fmt.Sprintf("%s: rfi agent %q", where, a.ID)
	if _, err := uuid.Parse(a.ID); err != nil {
		p.Note(where, "%s: id must be a UUID", aw)
	}
	if seen.agents[a.ID] {
		p.Note(where, "%s: duplicate rfi agent id", aw)
	}
	seen.agents[a.ID] = true
	if a.ExpiryDays < 1 {
		p.Note(where, "%s: expiry_days must be at least 1", aw)
	}
	if len(a.Documents) == 0 {
		p.Note(where, "%s: documents must name at least one document", aw)
	}
	kinds := onboarding.RFIDocumentKinds()
	for i, d := range a.Documents {
		switch {
		case !slices.Contains(kinds, d):
			p.Note(where, "%s: unknown document %q (use one of %s)", aw, d, strings.Join(kinds, ", "))
		case slices.Contains(a.Documents[:i], d):
			p.Note(where, "%s: document %q is listed twice", aw, d)
		}
	}
}
