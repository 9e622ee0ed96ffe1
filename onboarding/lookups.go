package onboarding

// Person returns the person with id on the application, or nil.
func (d *Data) Person(id string) *Person {
	for i := range d.People {
		if d.People[i].ID == id {
			return &d.People[i]
		}
	}
	return nil
}

// Entity returns the related entity with id, or nil.
func (d *Data) Entity(id string) *Entity {
	for i := range d.Entities {
		if d.Entities[i].ID == id {
			return &d.Entities[i]
		}
	}
	return nil
}

// DocumentsOf returns the documents of the company (personID "") or of
// the person with personID, as a pointer so that a caller may create the
// map; nil when the person is not on the application.
func (d *Data) DocumentsOf(personID string) *map[string]Document {
	if personID == "" {
		return &d.Documents
	}
	if p := d.Person(personID); p != nil {
		return &p.Documents
	}
	return nil
}

// Document returns the document of field fieldID of the company
// (personID "") or of the person with personID, if there is one.
func (d *Data) Document(fieldID, personID string) (Document, bool) {
	docs := d.DocumentsOf(personID)
	if docs == nil {
		return Document{}, false
	}
	doc, ok := (*docs)[fieldID]
	return doc, ok
}

// documentOwners returns the document maps of the company, every person
// and every entity, in that order.
func (d *Data) documentOwners() []map[string]Document {
	out := make([]map[string]Document, 0, 1+len(d.People)+len(d.Entities))
	out = append(out, d.Documents)
	for i := range d.People {
		out = append(out, d.People[i].Documents)
	}
	for i := range d.Entities {
		out = append(out, d.Entities[i].Documents)
	}
	return out
}

// Involves reports whether the party of partyType (OwnerPerson or
// OwnerEntity) with id owns or is owned in o.
func (o *Ownership) Involves(partyType PartyType, id string) bool {
	return o.OwnerType == partyType && o.OwnerID == id || o.OwnedType == partyType && o.OwnedID == id
}

// OwnershipRow returns the ownership row with id, or nil.
func (d *Data) OwnershipRow(id string) *Ownership {
	for i := range d.Ownership {
		if d.Ownership[i].ID == id {
			return &d.Ownership[i]
		}
	}
	return nil
}
