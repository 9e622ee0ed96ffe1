package pdf

import "strconv"

// Names and keywords the scan acts on. The lexer returns these constants
// (so comparisons are of interned strings and lexing allocates nothing) and
// "" for any other name or keyword.
const (
	nameType        = "Type"
	namePage        = "Page"
	namePages       = "Pages"
	nameCatalog     = "Catalog"
	nameObjStm      = "ObjStm"
	nameXRef        = "XRef"
	nameCount       = "Count"
	nameKids        = "Kids"
	nameLength      = "Length"
	nameN           = "N"
	nameFirst       = "First"
	nameRoot        = "Root"
	nameFilter      = "Filter"
	nameFlateDecode = "FlateDecode"
	nameDecodeParms = "DecodeParms"
	namePredictor   = "Predictor"

	kwObj       = "obj"
	kwEndobj    = "endobj"
	kwStream    = "stream"
	kwEndstream = "endstream"
	kwR         = "R"
	kwTrailer   = "trailer"
	kwXref      = "xref"
	kwStartxref = "startxref"
	kwNull      = "null"
)

func internName(b []byte) string {
	switch string(b) {
	case nameType:
		return nameType
	case namePage:
		return namePage
	case namePages:
		return namePages
	case nameCatalog:
		return nameCatalog
	case nameObjStm:
		return nameObjStm
	case nameXRef:
		return nameXRef
	case nameCount:
		return nameCount
	case nameKids:
		return nameKids
	case nameLength:
		return nameLength
	case nameN:
		return nameN
	case nameFirst:
		return nameFirst
	case nameRoot:
		return nameRoot
	case nameFilter:
		return nameFilter
	case nameFlateDecode:
		return nameFlateDecode
	case nameDecodeParms:
		return nameDecodeParms
	case namePredictor:
		return namePredictor
	}
	return ""
}

func internKeyword(b []byte) string {
	switch string(b) {
	case kwObj:
		return kwObj
	case kwEndobj:
		return kwEndobj
	case kwStream:
		return kwStream
	case kwEndstream:
		return kwEndstream
	case kwR:
		return kwR
	case kwTrailer:
		return kwTrailer
	case kwXref:
		return kwXref
	case kwStartxref:
		return kwStartxref
	case kwNull:
		return kwNull
	}
	return ""
}

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tokEOF tokKind = iota
	tokInt
	tokReal
	tokName
	tokKeyword
	tokString
	tokDictOpen
	tokDictClose
	tokArrayOpen
	tokArrayClose
	tokOther
)

// token is one lexical token; pos and end are its offsets in the input.
type token struct {
	kind     tokKind
	s        string // interned name or keyword
	i        int64  // integer value
	pos, end int64
}

// lexer splits PDF bytes into tokens (ISO 32000-1, section 7.2), with room to
// push back the two tokens of look-ahead that "N G R" needs.
type lexer struct {
	b       *buffer
	back    [4]token
	nback   int
	scratch [64]byte
}

func (l *lexer) next() token {
	if l.nback > 0 {
		l.nback--
		return l.back[l.nback]
	}
	return l.lex()
}

func (l *lexer) unread(t token) {
	if l.nback < len(l.back) {
		l.back[l.nback] = t
		l.nback++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isRegular(c byte) bool { return !isSpace(c) && !isDelim(c) }

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func (l *lexer) lex() token {
	b := l.b
	for {
		pos := b.pos()
		c, ok := b.readByte()
		if !ok {
			return token{kind: tokEOF, pos: pos, end: pos}
		}
		t := token{pos: pos}
		switch {
		case isSpace(c):
			continue
		case c == '%':
			b.skipLine()
			continue
		case c == '/':
			t.kind, t.s = tokName, l.name()
		case c == '(':
			b.skipLiteralString()
			t.kind = tokString
		case c == '<':
			if n, ok := b.peekByte(); ok && n == '<' {
				b.readByte()
				t.kind = tokDictOpen
			} else {
				b.skipPast([]byte(">"))
				t.kind = tokString
			}
		case c == '>':
			t.kind = tokOther
			if n, ok := b.peekByte(); ok && n == '>' {
				b.readByte()
				t.kind = tokDictClose
			}
		case c == '[':
			t.kind = tokArrayOpen
		case c == ']':
			t.kind = tokArrayClose
		case isDelim(c): // ) { }
			t.kind = tokOther
		default:
			l.regular(c, &t)
		}
		t.end = b.pos()
		return t
	}
}

// name reads the rest of a name after "/", decoding #xx escapes.
func (l *lexer) name() string {
	b := l.b
	n, long := 0, false
	for {
		c, ok := b.peekByte()
		if !ok || !isRegular(c) {
			break
		}
		b.readByte()
		if c == '#' {
			if h, ok := b.peekByte(); ok {
				if hi, ok := hexVal(h); ok {
					b.readByte()
					if l2, ok := b.peekByte(); ok {
						if lo, ok := hexVal(l2); ok {
							b.readByte()
							c = hi<<4 | lo
						}
					}
				}
			}
		}
		if n < len(l.scratch) {
			l.scratch[n] = c
			n++
		} else {
			long = true
		}
	}
	if long {
		return ""
	}
	return internName(l.scratch[:n])
}

// regular reads a number or keyword that starts with c.
func (l *lexer) regular(c byte, t *token) {
	b := l.b
	n, long := 0, false
	for {
		if n < len(l.scratch) {
			l.scratch[n] = c
			n++
		} else {
			long = true
		}
		next, ok := b.peekByte()
		if !ok || !isRegular(next) {
			break
		}
		b.readByte()
		c = next
	}
	word := l.scratch[:n]
	if long {
		t.kind = tokKeyword
		return
	}
	digits := word
	if digits[0] == '+' || digits[0] == '-' {
		digits = digits[1:]
	}
	isInt := len(digits) > 0 && len(digits) <= 18
	isNum := len(digits) > 0
	dots := 0
	for _, d := range digits {
		switch {
		case d == '.':
			isInt = false
			dots++
		case d < '0' || d > '9':
			isInt, isNum = false, false
		}
	}
	switch {
	case isInt:
		v, _ := strconv.ParseInt(string(word), 10, 64)
		t.kind, t.i = tokInt, v
	case isNum && dots <= 1:
		t.kind = tokReal
	default:
		t.kind, t.s = tokKeyword, internKeyword(word)
	}
}
