package pdf

import (
	"bytes"
	"io"
)

// buffer reads its input through a window: from an io.ReaderAt (a file,
// seekable, never beyond its size) or from an io.Reader (a decoded stream,
// forward only).
type buffer struct {
	ra  io.ReaderAt
	end int64 // ra: the size
	rd  io.Reader
	buf []byte
	off int64 // offset of buf[0] in the input
	i   int   // position in buf
	eof bool  // rd: no more input
}

func newFileBuffer(r io.ReaderAt, size int64) *buffer {
	return &buffer{ra: r, end: size, buf: make([]byte, 0, readWindow)}
}

func newStreamBuffer(r io.Reader) *buffer {
	return &buffer{rd: r, buf: make([]byte, 0, 4<<10)}
}

func (b *buffer) pos() int64 { return b.off + int64(b.i) }

// fill loads the input that follows the window; it returns false at the end.
func (b *buffer) fill() bool {
	next := b.off + int64(len(b.buf))
	b.off, b.i, b.buf = next, 0, b.buf[:0]
	if b.ra != nil {
		if next >= b.end {
			return false
		}
		buf := b.buf[:min(int64(cap(b.buf)), b.end-next)]
		n, _ := b.ra.ReadAt(buf, next)
		if n < len(buf) {
			b.end = next + int64(n) // a short file: stop where it stops
		}
		b.buf = buf[:n]
		return n > 0
	}
	for !b.eof {
		n, err := b.rd.Read(b.buf[:cap(b.buf)])
		if err != nil {
			b.eof = true
		}
		if n > 0 {
			b.buf = b.buf[:n]
			return true
		}
	}
	return false
}

func (b *buffer) readByte() (byte, bool) {
	if b.i >= len(b.buf) && !b.fill() {
		return 0, false
	}
	c := b.buf[b.i]
	b.i++
	return c, true
}

func (b *buffer) peekByte() (byte, bool) {
	if b.i >= len(b.buf) && !b.fill() {
		return 0, false
	}
	return b.buf[b.i], true
}

// seek moves a file window to offset p.
func (b *buffer) seek(p int64) {
	if p >= b.off && p <= b.off+int64(len(b.buf)) {
		b.i = int(p - b.off)
		return
	}
	b.off, b.i, b.buf = min(max(p, 0), b.end), 0, b.buf[:0]
}

// discard skips n bytes forward; it returns false at the end of the input.
func (b *buffer) discard(n int64) bool {
	if b.ra != nil {
		p := b.pos() + n
		b.seek(p)
		return p <= b.end
	}
	for n > 0 {
		if b.i >= len(b.buf) && !b.fill() {
			return false
		}
		k := min(n, int64(len(b.buf)-b.i))
		b.i += int(k)
		n -= k
	}
	return true
}

// skipPast moves past the next occurrence of pat, or to the end.
func (b *buffer) skipPast(pat []byte) {
	for {
		if b.i >= len(b.buf) && !b.fill() {
			return
		}
		if j := bytes.Index(b.buf[b.i:], pat); j >= 0 {
			b.i += j + len(pat)
			return
		}
		// Keep the last len(pat)-1 bytes: pat may straddle two windows.
		keep := min(len(pat)-1, len(b.buf)-b.i)
		if b.ra != nil {
			next := b.off + int64(len(b.buf)) - int64(keep)
			if !b.fillAt(next) {
				return
			}
			continue
		}
		b.i = len(b.buf) // a stream: the bytes kept would be lost anyway
	}
}

// fillAt loads a file window at offset p (which must be past the start of
// the current window, so that scanning always moves forward).
func (b *buffer) fillAt(p int64) bool {
	if len(b.buf) > 0 && p <= b.off {
		p = b.off + int64(len(b.buf)) // no progress possible: drop the overlap
	}
	b.off, b.i, b.buf = p, 0, b.buf[:0]
	return b.fill()
}

// skipLine moves past the end of the current line.
func (b *buffer) skipLine() {
	for {
		c, ok := b.peekByte()
		if !ok || c == '\n' || c == '\r' {
			return
		}
		b.i++
	}
}

// skipLiteralString moves past the end of a (string), whose "(" was read.
func (b *buffer) skipLiteralString() {
	for depth := 1; depth > 0; {
		c, ok := b.readByte()
		switch {
		case !ok:
			return
		case c == '\\':
			b.readByte()
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
	}
}
