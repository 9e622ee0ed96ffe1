package pdf

// dict is what the parser keeps of an object's top-level dictionary.
type dict struct {
	typ       string  // /Type, when a name the scan knows
	count     int64   // /Count
	length    int64   // /Length, when a direct number
	n, first  int64   // /N and /First of an object stream
	pagesRef  int64   // /Pages of a catalog
	rootRef   int64   // /Root of a trailer
	kids      []int64 // /Kids references
	kidsOK    bool
	filters   []string // /Filter names ("" for names the scan does not know)
	filterBad bool     // /Filter was not a name or an array of names
	predictor int64    // /Predictor of /DecodeParms
	parmsBad  bool     // /DecodeParms was not a dictionary or null
}

func (d *dict) reset() {
	*d = dict{count: -1, length: -1, n: -1, first: -1, pagesRef: -1, rootRef: -1}
}

// flateOnly reports whether the stream is FlateDecode without a predictor.
func (d *dict) flateOnly() bool {
	return !d.filterBad && len(d.filters) == 1 && d.filters[0] == nameFlateDecode && !d.parmsBad && d.predictor <= 1
}

// valKind is the kind of a parsed value.
type valKind uint8

const (
	valOther valKind = iota
	valInt
	valName
	valRef
	valDict
	valArray
	valNull
	valEnd // a keyword that ends an object (endobj, stream, ...) was met
)

// parser parses PDF objects from a lexer.
type parser struct {
	lex lexer
	// last holds the payload of the last value parseValue returned: the
	// number of an integer or reference, the name of a name.
	lastInt  int64
	lastName string
}

// parseValue parses the value that starts with token t. The entries of a
// dictionary are stored in d when d is not nil.
func (p *parser) parseValue(t token, depth int, d *dict) valKind {
	switch t.kind {
	case tokInt:
		t2 := p.lex.next()
		if t2.kind == tokInt {
			t3 := p.lex.next()
			if t3.kind == tokKeyword && t3.s == kwR {
				p.lastInt = t.i
				return valRef
			}
			p.lex.unread(t3)
		}
		p.lex.unread(t2)
		p.lastInt = t.i
		return valInt
	case tokName:
		p.lastName = t.s
		return valName
	case tokDictOpen:
		if depth >= maxDepth {
			p.skipContainer()
		} else {
			p.parseDict(depth+1, d)
		}
		return valDict
	case tokArrayOpen:
		if depth >= maxDepth {
			p.skipContainer()
		} else {
			p.parseArray(depth+1, nil, nil)
		}
		return valArray
	case tokKeyword:
		switch t.s {
		case kwNull:
			return valNull
		case kwObj, kwEndobj, kwStream, kwEndstream, kwTrailer, kwXref, kwStartxref:
			p.lex.unread(t)
			return valEnd
		}
	case tokEOF:
		return valEnd
	}
	return valOther
}

// parseDict parses dictionary entries up to ">>"; d, when not nil, receives
// the entries the scan needs.
func (p *parser) parseDict(depth int, d *dict) {
	for {
		k := p.lex.next()
		switch k.kind {
		case tokEOF, tokDictClose:
			return
		case tokKeyword:
			if p.parseValue(k, depth, nil) == valEnd {
				return
			}
			continue
		case tokName:
		default:
			continue // junk in place of a key
		}
		t := p.lex.next()
		if t.kind == tokDictClose {
			return
		}
		if d == nil {
			if p.parseValue(t, depth, nil) == valEnd {
				return
			}
			continue
		}
		if !p.dictEntry(k.s, t, depth, d) {
			return
		}
	}
}

// dictEntry parses the value, starting with t, of key in dictionary d. It
// returns false when the dictionary ended early.
func (p *parser) dictEntry(key string, t token, depth int, d *dict) bool {
	switch {
	case key == nameKids && t.kind == tokArrayOpen && depth < maxDepth:
		d.kids = d.kids[:0]
		d.kidsOK = p.parseArray(depth+1, &d.kids, nil)
		return true
	case key == nameFilter && t.kind == tokArrayOpen && depth < maxDepth:
		d.filters = d.filters[:0]
		d.filterBad = !p.parseArray(depth+1, nil, &d.filters)
		return true
	case key == nameDecodeParms && t.kind == tokDictOpen && depth < maxDepth:
		var parms dict
		parms.reset()
		p.parseDict(depth+1, &parms)
		d.predictor, d.parmsBad = parms.predictor, false
		return true
	}
	v := p.parseValue(t, depth, nil)
	switch key {
	case nameType:
		if v == valName {
			d.typ = p.lastName
		}
	case nameCount:
		d.count = -1
		if v == valInt {
			d.count = p.lastInt
		}
	case nameLength:
		d.length = -1
		if v == valInt {
			d.length = p.lastInt
		}
	case nameN:
		if v == valInt {
			d.n = p.lastInt
		}
	case nameFirst:
		if v == valInt {
			d.first = p.lastInt
		}
	case namePages:
		if v == valRef {
			d.pagesRef = p.lastInt
		}
	case nameRoot:
		if v == valRef {
			d.rootRef = p.lastInt
		}
	case namePredictor:
		if v == valInt {
			d.predictor = p.lastInt
		}
	case nameFilter:
		d.filters = d.filters[:0]
		d.filterBad = v != valName
		if v == valName {
			d.filters = append(d.filters, p.lastName)
		}
	case nameDecodeParms:
		d.parmsBad = v != valNull
	case nameKids:
		d.kids, d.kidsOK = nil, false
	}
	return v != valEnd
}

// parseArray parses array elements up to "]". When refs is not nil it
// collects the object numbers of references, when names is not nil the
// names; it returns false when an element of another kind was met, or too
// many were collected.
func (p *parser) parseArray(depth int, refs *[]int64, names *[]string) bool {
	ok := true
	for {
		t := p.lex.next()
		switch t.kind {
		case tokEOF:
			return false
		case tokArrayClose:
			return ok
		case tokDictClose:
			p.lex.unread(t) // let the enclosing dictionary end
			return false
		}
		v := p.parseValue(t, depth, nil)
		switch {
		case v == valEnd:
			return false
		case refs != nil && v == valRef && len(*refs) < maxKids:
			*refs = append(*refs, p.lastInt)
		case names != nil && v == valName && len(*names) < 8:
			*names = append(*names, p.lastName)
		case refs != nil || names != nil:
			ok = false
		}
	}
}

// skipContainer skips tokens up to the end of the array or dictionary just
// opened, without recursion.
func (p *parser) skipContainer() {
	for level := 1; level > 0; {
		t := p.lex.next()
		switch t.kind {
		case tokEOF:
			return
		case tokDictOpen, tokArrayOpen:
			level++
		case tokDictClose, tokArrayClose:
			level--
		case tokKeyword:
			switch t.s {
			case kwObj, kwEndobj, kwStream, kwEndstream, kwTrailer, kwXref, kwStartxref:
				p.lex.unread(t)
				return
			}
		}
	}
}

// skipTo moves an object stream's parser to offset target of the decoded
// stream, keeping any looked-ahead token that starts there or later. It
// returns false when the parser is already past target.
func (p *parser) skipTo(target int64) bool {
	lx := &p.lex
	for lx.nback > 0 && lx.back[lx.nback-1].pos < target {
		lx.nback--
	}
	if lx.nback > 0 {
		return true
	}
	if pos := lx.b.pos(); pos <= target {
		return lx.b.discard(target - pos)
	}
	return false
}
