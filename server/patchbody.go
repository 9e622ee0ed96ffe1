package server

import (
	"bytes"
	"encoding/json"

	"onboard/onboarding"
	"onboard/server/web"
)

// parsePatch reads a PATCH body (docs/api.md): an object whose only member is
// "fields", a non-empty object of field ids to values. Entries keep the order
// of the body. A body that is not JSON, or that names a member twice at any
// depth (web.CheckJSON), is refused before anything else; member names match
// exactly.
func parsePatch(body []byte) ([]onboarding.FieldUpdate, error) {
	if err := web.CheckJSON(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, _ := dec.Token()
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, onboarding.ErrPatchBodyDetails(map[string]string{"body": "must be a JSON object"})
	}
	details := map[string]string{}
	var fieldsRaw json.RawMessage
	seenFields := false
	for dec.More() {
		keyTok, _ := dec.Token()
		key := keyTok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, onboarding.ErrInvalidJSON
		}
		if key == "fields" {
			fieldsRaw, seenFields = v, true
			continue
		}
		if len(details) < onboarding.MaxListedIDs {
			details[onboarding.ClipInput(key)] = `only "fields" can be updated; people, ownership and documents are managed by the applicant`
		}
	}
	if !seenFields {
		details["fields"] = "is required: an object of field ids to values"
	}
	if len(details) > 0 {
		return nil, onboarding.ErrPatchBodyDetails(details)
	}
	updates, err := parseFieldsObject(fieldsRaw)
	if err != nil {
		return nil, err
	}
	if len(updates) == 0 {
		return nil, onboarding.ErrPatchBodyDetails(map[string]string{"fields": "must contain at least one field id"})
	}
	return updates, nil
}

func parseFieldsObject(raw json.RawMessage) ([]onboarding.FieldUpdate, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, _ := dec.Token()
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, onboarding.ErrPatchBodyDetails(map[string]string{"fields": "must be an object of field ids to values"})
	}
	var out []onboarding.FieldUpdate
	for dec.More() { // web.CheckJSON has refused repeated ids
		keyTok, _ := dec.Token()
		id := keyTok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, onboarding.ErrInvalidJSON
		}
		out = append(out, onboarding.FieldUpdate{ID: id, Value: v})
	}
	return out, nil
}
