package server

import "sync"

// answerBuffers reuses the buffers that GET /applications/:id renders an
// application's JSON into, so that reads do not each allocate a new one:
// the garbage collector's work grows with the bytes allocated.
type answerBuffers struct {
	pool sync.Pool // *[]byte
}

// answerBufferSize is the capacity of a new buffer: an application with
// its registry documents' links fits.
const answerBufferSize = 4 << 10

// maxPooledAnswer bounds the buffers kept for reuse, so that one large
// application does not keep its answer's memory for the life of the pool.
const maxPooledAnswer = 64 << 10

// get returns an empty buffer.
func (p *answerBuffers) get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, answerBufferSize)
	return &b
}

// put gives b back once its bytes are written to the response.
func (p *answerBuffers) put(b *[]byte) {
	if cap(*b) > maxPooledAnswer {
		return
	}
	*b = (*b)[:0]
	p.pool.Put(b)
}
