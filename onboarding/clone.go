package onboarding

import (
	"encoding/json"
	"maps"
	"slices"
)

// Clone returns a deep copy of a: changing either never changes the other.
// A store that keeps decoded applications hands out clones, so that a
// caller may change what it reads. Fields of value types are copied by the
// first assignment; every slice, map and pointer is copied below
// (TestCloneSharesNothing finds one that a new field leaves shared).
func (a *Application) Clone() *Application {
	c := *a
	c.Data = a.Data.clone()
	c.Participants = cloneEach(a.Participants, (*Participant).clone)
	c.SubmittedAt = clonePtr(a.SubmittedAt)
	c.CompletedAt = clonePtr(a.CompletedAt)
	c.RegistryDocuments = cloneEach(a.RegistryDocuments, (*RegistryDocument).clone)
	c.Decisions = cloneEach(a.Decisions, (*Decision).clone)
	c.InviteResends = slices.Clone(a.InviteResends)
	c.CollaboratorInvites = slices.Clone(a.CollaboratorInvites)
	c.Visited = slices.Clone(a.Visited)
	return &c
}

func (d *Data) clone() Data {
	c := *d
	c.Fields = cloneRawMap(d.Fields)
	c.People = cloneEach(d.People, (*Person).clone)
	c.Entities = cloneEach(d.Entities, (*Entity).clone)
	c.Ownership = slices.Clone(d.Ownership)
	c.Documents = cloneDocuments(d.Documents)
	c.Meta = d.Meta.clone()
	return c
}

func (p *Participant) clone() Participant {
	c := *p
	c.PreAuthHash = slices.Clone(p.PreAuthHash)
	c.VerifyCodeHash = slices.Clone(p.VerifyCodeHash)
	c.OpenedAt = clonePtr(p.OpenedAt)
	return c
}

func (r *RegistryDocument) clone() RegistryDocument {
	c := *r
	c.FetchedAt = clonePtr(r.FetchedAt)
	return c
}

func (d *Decision) clone() Decision {
	c := *d
	c.Data = slices.Clone(d.Data)
	return c
}

func (p *Person) clone() Person {
	c := *p
	c.Roles = slices.Clone(p.Roles)
	c.HomeAddress = clonePtr(p.HomeAddress)
	c.Fields = cloneRawMap(p.Fields)
	c.Documents = cloneDocuments(p.Documents)
	return c
}

func (e *Entity) clone() Entity {
	c := *e
	c.Documents = cloneDocuments(e.Documents)
	return c
}

func (m *Meta) clone() Meta {
	c := *m
	c.PrimaryContact = clonePtr(m.PrimaryContact)
	c.RegistrySources = slices.Clone(m.RegistrySources)
	return c
}

// cloneDocuments copies a map of documents; a Document's only reference is
// OverriddenAt.
func cloneDocuments(m map[string]Document) map[string]Document {
	if m == nil {
		return nil
	}
	c := maps.Clone(m)
	for k, d := range c {
		if d.OverriddenAt != nil {
			d.OverriddenAt = clonePtr(d.OverriddenAt)
			c[k] = d
		}
	}
	return c
}

// cloneRawMap copies a map of JSON values into one new buffer, each value
// capped at its length so that appending to one never writes into the next.
func cloneRawMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	n := 0
	for _, v := range m {
		n += len(v)
	}
	buf := make([]byte, 0, n)
	c := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		if v == nil {
			c[k] = nil
			continue
		}
		start := len(buf)
		buf = append(buf, v...)
		c[k] = buf[start:len(buf):len(buf)]
	}
	return c
}

// cloneEach copies s, each element by clone; nil stays nil.
func cloneEach[T any](s []T, clone func(*T) T) []T {
	if s == nil {
		return nil
	}
	c := make([]T, len(s))
	for i := range s {
		c[i] = clone(&s[i])
	}
	return c
}

// clonePtr points to a copy of *p; nil stays nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
