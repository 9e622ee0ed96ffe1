package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"onboard/onboarding"
)

// The partner's view is the API's hottest output: every get-application
// answer is one. Encoding it by reflection costs several times the rest of
// a get, so the view types are encoded here by hand, into exactly the bytes
// the reflecting encoder writes in the API's mode (jsonv1.DefaultOptionsV1:
// members in field order, map keys sorted, nil slices and maps as null,
// '<', '>', '&', U+2028 and U+2029 escaped, invalid UTF-8 replaced).
// TestViewJSONMatchesReflection holds the two together on a view with every
// member set, so a member added to a view type and not here fails it;
// FuzzViewJSON holds them together on arbitrary strings, numbers and raw
// values. The program wires AppendView into the Service too
// (onboarding.Options.AppendView), which encodes event data and export
// lines with it; TestEventDataMatchesReflection holds those to the bytes
// the Service's reflecting default commits.

// AppendView appends v's JSON encoding to dst; it fails, as the reflecting
// encoder does, on a number that JSON cannot hold and on a raw value that
// is not valid JSON. It is an onboarding.AppendViewFunc.
func AppendView(dst []byte, v *onboarding.ApplicationView) ([]byte, error) {
	w := jsonWriter{b: dst}
	w.view(v)
	return w.b, w.err
}

// view appends v's JSON encoding to w.
func (w *jsonWriter) view(v *onboarding.ApplicationView) {
	w.raw(`{"id":`)
	w.str(v.ID)
	w.raw(`,"config_id":`)
	w.str(v.ConfigID)
	w.raw(`,"status":`)
	w.str(string(v.Status))
	if v.Link != "" {
		w.raw(`,"link":`)
		w.str(v.Link)
	}
	w.raw(`,"data":`)
	w.data(&v.Data)
	w.raw(`,"participants":`)
	appendArray(w, v.Participants, (*jsonWriter).participant)
	if v.RegistryDocuments != nil {
		w.raw(`,"registry_documents":`)
		appendArray(w, *v.RegistryDocuments, (*jsonWriter).registryDocument)
	}
	if v.RegistryDocumentsStatus != "" {
		w.raw(`,"registry_documents_status":`)
		w.str(string(v.RegistryDocumentsStatus))
	}
	w.raw(`,"created_at":`)
	w.str(v.CreatedAt)
	w.raw(`,"updated_at":`)
	w.str(v.UpdatedAt)
	w.raw(`,"submitted_at":`)
	w.optionalStr(v.SubmittedAt)
	w.raw(`,"completed_at":`)
	w.optionalStr(v.CompletedAt)
	w.raw(`,"decisions":`)
	appendArray(w, v.Decisions, (*jsonWriter).decision)
	w.raw(`}`)
}

// jsonWriter appends JSON to b as the reflecting encoder writes it in the
// API's mode; the first failure is kept in err and the rest of the
// encoding goes on, to be discarded.
type jsonWriter struct {
	b   []byte
	err error
	// holes are where the links of a view with link holes go, in order.
	holes []linkHole
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) data(d *onboarding.DataView) {
	w.raw(`{"fields":`)
	appendObject(w, d.Fields, (*jsonWriter).rawValue)
	w.raw(`,"people":`)
	appendArray(w, d.People, (*jsonWriter).person)
	w.raw(`,"entities":`)
	appendArray(w, d.Entities, (*jsonWriter).entity)
	w.raw(`,"ownership":`)
	appendArray(w, d.Ownership, (*jsonWriter).ownership)
	w.raw(`,"documents":`)
	appendObject(w, d.Documents, (*jsonWriter).document)
	w.raw(`,"meta":`)
	w.meta(&d.Meta)
	w.raw(`}`)
}

func (w *jsonWriter) person(p *onboarding.PersonView) {
	w.raw(`{"id":`)
	w.str(p.ID)
	w.raw(`,"source":`)
	w.str(string(p.Source))
	w.raw(`,"roles":`)
	appendArray(w, p.Roles, func(w *jsonWriter, r *onboarding.PersonRole) { w.str(string(*r)) })
	w.raw(`,"full_name":`)
	w.str(p.FullName)
	w.raw(`,"first_name":`)
	w.str(p.FirstName)
	w.raw(`,"last_name":`)
	w.str(p.LastName)
	w.omittableStr(`,"email":`, p.Email)
	w.omittableStr(`,"phone_number":`, p.PhoneNumber)
	w.omittableStr(`,"date_of_birth":`, p.DateOfBirth)
	w.omittableStr(`,"nationality":`, p.Nationality)
	if p.HomeAddress != nil {
		w.raw(`,"home_address":`)
		w.address(p.HomeAddress)
	}
	w.raw(`,"documents":`)
	appendObject(w, p.Documents, (*jsonWriter).document)
	w.raw(`}`)
}

func (w *jsonWriter) address(a *onboarding.Address) {
	w.raw(`{"line1":`)
	w.str(a.Line1)
	w.omittableStr(`,"line2":`, a.Line2)
	w.raw(`,"city":`)
	w.str(a.City)
	w.omittableStr(`,"region":`, a.Region)
	w.omittableStr(`,"postcode":`, a.Postcode)
	w.raw(`,"country":`)
	w.str(a.Country)
	w.raw(`}`)
}

func (w *jsonWriter) entity(e *onboarding.EntityView) {
	w.raw(`{"id":`)
	w.str(e.ID)
	w.raw(`,"source":`)
	w.str(string(e.Source))
	w.raw(`,"name":`)
	w.str(e.Name)
	w.raw(`,"type":`)
	w.str(string(e.Type))
	w.omittableStr(`,"country":`, e.Country)
	w.raw(`,"documents":`)
	appendObject(w, e.Documents, (*jsonWriter).document)
	w.raw(`}`)
}

func (w *jsonWriter) ownership(o *onboarding.OwnershipView) {
	w.raw(`{"id":`)
	w.str(o.ID)
	w.raw(`,"owner_type":`)
	w.str(string(o.OwnerType))
	w.raw(`,"owner_id":`)
	w.str(o.OwnerID)
	w.raw(`,"owned_type":`)
	w.str(string(o.OwnedType))
	w.omittableStr(`,"owned_id":`, o.OwnedID)
	w.raw(`,"percentage":`)
	w.float(o.Percentage)
	w.omittableStr(`,"percentage_band":`, o.PercentageBand)
	w.raw(`,"is_direct":`)
	w.bool(o.IsDirect)
	w.raw(`,"is_nominee":`)
	w.bool(o.IsNominee)
	w.raw(`}`)
}

func (w *jsonWriter) document(d *onboarding.DocumentView) {
	w.raw(`{"file_id":`)
	w.str(d.FileID)
	w.raw(`,"file_name":`)
	w.str(d.FileName)
	w.raw(`,"file_type":`)
	w.str(d.FileType)
	w.raw(`,"uploaded_at":`)
	w.str(d.UploadedAt)
	w.raw(`,"status":`)
	w.str(string(d.Status))
	w.omittableStr(`,"acceptance_reason":`, d.AcceptanceReason)
	w.omittableStr(`,"user_override_reason":`, d.UserOverrideReason)
	if d.OverriddenAt != nil {
		w.raw(`,"overridden_at":`)
		w.str(*d.OverriddenAt)
	}
	w.downloadURL(d.DownloadURL, d.PendingLink())
	w.raw(`}`)
}

// downloadURL writes a document's download_url member: url, or a hole for
// link when it has one (renderedView); nothing when neither is set.
func (w *jsonWriter) downloadURL(url string, link onboarding.UnsignedLink) {
	if link.IsZero() {
		w.omittableStr(`,"download_url":`, url)
		return
	}
	w.raw(`,"download_url":`)
	w.holes = append(w.holes, linkHole{at: len(w.b), link: link})
}

func (w *jsonWriter) meta(m *onboarding.MetaView) {
	// Every member may be left out, so the separator is decided as they
	// are written.
	w.raw(`{`)
	sep := ""
	if c := m.PrimaryContact; c != nil {
		w.raw(`"primary_contact":{"name":`)
		w.optionalStr(c.Name)
		w.raw(`,"email":`)
		w.str(c.Email)
		w.omittableStr(`,"role":`, c.Role)
		w.raw(`}`)
		sep = ","
	}
	if len(m.RegistrySources) > 0 {
		w.raw(sep + `"registry_sources":`)
		appendArray(w, m.RegistrySources, func(w *jsonWriter, s *onboarding.RegistrySource) { w.str(string(*s)) })
		sep = ","
	}
	if m.WebsiteFavicon != "" {
		w.raw(sep + `"website_favicon":`)
		w.str(m.WebsiteFavicon)
		sep = ","
	}
	w.omittableStr(sep+`"web_extracted_industry":`, m.WebExtractedIndustry)
	w.raw(`}`)
}

func (w *jsonWriter) registryDocument(d *onboarding.RegistryDocumentView) {
	w.raw(`{"id":`)
	w.str(d.ID)
	w.raw(`,"source":`)
	w.str(string(d.Source))
	w.raw(`,"document_type":`)
	w.str(d.DocumentType)
	w.raw(`,"filing_date":`)
	w.optionalStr(d.FilingDate)
	w.raw(`,"fetched_at":`)
	w.optionalStr(d.FetchedAt)
	w.downloadURL(d.DownloadURL, d.PendingLink())
	w.raw(`}`)
}

func (w *jsonWriter) participant(p *onboarding.ParticipantView) {
	w.raw(`{"email":`)
	w.str(p.Email)
	w.raw(`,"name":`)
	w.optionalStr(p.Name)
	w.raw(`,"role":`)
	w.str(string(p.Role))
	w.raw(`,"link":`)
	w.str(p.Link)
	w.raw(`}`)
}

func (w *jsonWriter) decision(d *onboarding.DecisionView) {
	w.raw(`{"id":`)
	w.str(d.ID)
	w.raw(`,"type":`)
	w.str(string(d.Type))
	w.raw(`,"timestamp":`)
	w.str(d.Timestamp)
	w.raw(`,"recorded_at":`)
	w.str(d.RecordedAt)
	w.raw(`,"data":`)
	w.rawValue(&d.Data)
	w.raw(`,"api_key_name":`)
	w.str(d.APIKeyName)
	w.raw(`}`)
}

// omittableStr writes member (its separator, name and colon) and s, unless
// s is empty (omitempty).
func (w *jsonWriter) omittableStr(member, s string) {
	if s != "" {
		w.raw(member)
		w.str(s)
	}
}

// optionalStr writes *s, or null when s is nil.
func (w *jsonWriter) optionalStr(s *string) {
	if s == nil {
		w.raw(`null`)
		return
	}
	w.str(*s)
}

func (w *jsonWriter) bool(v bool) {
	if v {
		w.raw(`true`)
	} else {
		w.raw(`false`)
	}
}

// float writes f as the reflecting encoder does: the shortest decimal that
// reads back as f, in exponent form below 1e-6 and from 1e21.
func (w *jsonWriter) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.fail(fmt.Errorf("json: cannot encode %v", f))
		w.raw(`0`)
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(w.b); format == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		// e-09 is written e-9.
		w.b[n-2] = w.b[n-1]
		w.b = w.b[:n-1]
	}
}

// rawValue writes a stored JSON value. One already in the encoder's form
// (compact, with nothing to escape) is copied; any other goes through the
// reflecting encoder, which also rejects one that is not valid JSON.
func (w *jsonWriter) rawValue(v *json.RawMessage) {
	if *v == nil {
		w.raw(`null`)
		return
	}
	if canonicalRaw(*v) {
		w.b = append(w.b, *v...)
		return
	}
	b, err := jsonv2.Marshal(*v, jsonv1.DefaultOptionsV1())
	if err != nil {
		w.fail(err)
		w.raw(`null`)
		return
	}
	w.b = append(w.b, b...)
}

// canonicalRaw reports whether v is valid JSON that the reflecting
// encoder would copy unchanged: no white space outside strings, and no
// escape sequence or character that it escapes.
func canonicalRaw(v []byte) bool {
	inString := false
	for i, c := range v {
		switch {
		case c < ' ' || c == '\\' || c == '<' || c == '>' || c == '&':
			return false
		case c == ' ':
			if !inString {
				return false
			}
		case c == '"':
			inString = !inString // no escaped quote: there is no '\\'
		case c == 0xe2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xa8 || v[i+2] == 0xa9):
			return false // U+2028 or U+2029
		}
	}
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v[1:], '"') == len(v)-2 {
		// A string, the common case: quoted, with no escape sequence and
		// no other quote, it is valid when its UTF-8 is.
		return utf8.Valid(v)
	}
	return jsontext.Value(v).IsValid() // also rejects invalid UTF-8
}

func (w *jsonWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// appendArray writes s as a JSON array, or null when s is nil.
func appendArray[T any](w *jsonWriter, s []T, each func(*jsonWriter, *T)) {
	if s == nil {
		w.raw(`null`)
		return
	}
	w.raw(`[`)
	for i := range s {
		if i > 0 {
			w.raw(`,`)
		}
		each(w, &s[i])
	}
	w.raw(`]`)
}

// appendObject writes m as a JSON object with its keys in byte order, or
// null when m is nil.
func appendObject[V any](w *jsonWriter, m map[string]V, each func(*jsonWriter, *V)) {
	if m == nil {
		w.raw(`null`)
		return
	}
	w.raw(`{`)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			w.raw(`,`)
		}
		w.str(k)
		w.raw(`:`)
		v := m[k]
		each(w, &v)
	}
	w.raw(`}`)
}

// plainBytes marks the bytes a string holds as they are: printable ASCII
// but '"', '\\' and '<', '>', '&' (escaped for HTML). Control characters
// are escaped; a byte from 0x80 starts a multi-byte character, checked
// for U+2028, U+2029 and invalid UTF-8.
var plainBytes = func() (plain [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		plain[c] = !strings.ContainsRune(`"\<>&`, c)
	}
	return plain
}()

// str writes s as a JSON string: control characters, '"', '\\', '<', '>',
// '&', U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func (w *jsonWriter) str(s string) {
	b := append(slices.Grow(w.b, len(s)+2), '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainBytes[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			b = appendEscaped(b, c)
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			start = i + n
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, "89"[r-'\u2028'])
			start = i + n
		}
		i += n
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}

// appendEscaped writes the escape sequence of an ASCII byte that is not
// plain.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
