package server

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"weak"

	"onboard/onboarding"
)

// renderedViewsBytes is the budget of the rendered-answers memo
// (viewMemo), in bytes of answers: as much as the store's cache of decoded
// applications keeps of their JSON by default, since the memo renders the
// applications that cache shares.
const renderedViewsBytes = 8 << 20

// renderedView is an application's get-application answer rendered once:
// its JSON with a hole where the value of each download_url goes. Every
// answer fills the holes with links signed then, since each link is valid
// for onboarding.DocumentLinkTTL from the moment it is answered.
type renderedView struct {
	text  []byte
	holes []linkHole // in order of at
}

// linkHole is where a download_url's value goes in a rendered view.
type linkHole struct {
	at   int // offset in the text
	link onboarding.UnsignedLink
}

// renderedOverhead is what the memo counts for a rendered view and for each
// hole besides the text: their structs and strings' headers, and a map
// entry.
const renderedOverhead = 128

// size is what r counts against the memo's budget.
func (r *renderedView) size() int {
	return len(r.text) + renderedOverhead*(1+len(r.holes))
}

// applicationJSON appends to dst an application of k's organization as
// get-application answers it: its view, with fresh download links, encoded.
// The application is read as the store shares it, not copied, and rendered
// once per version (viewMemo).
func (m *viewMemo) applicationJSON(ctx context.Context, svc *onboarding.Service, k *onboarding.APIKey, id string, dst []byte) ([]byte, error) {
	err := svc.ReadApplication(ctx, k, id, func(app *onboarding.Application) error {
		r, err := m.rendered(svc, app)
		if err == nil {
			dst = appendRendered(svc, dst, r)
		}
		return err
	})
	return dst, err
}

// appendRendered appends r to dst with every hole filled with its link
// signed now.
func appendRendered(svc *onboarding.Service, dst []byte, r *renderedView) []byte {
	w := jsonWriter{b: dst}
	last := 0
	for _, h := range r.holes {
		w.b = append(w.b, r.text[last:h.at]...)
		w.str(svc.SignLink(h.link))
		last = h.at
	}
	w.b = append(w.b, r.text[last:]...)
	return w.b
}

// rendered returns app's get-application answer rendered, from the memo
// when it has rendered app before. app must be as the store shares it
// (onboarding.Service.ReadApplication): never changed.
func (m *viewMemo) rendered(svc *onboarding.Service, app *onboarding.Application) (*renderedView, error) {
	key := weak.Make(app)
	if r := m.get(key); r != nil {
		return r, nil
	}
	view, err := svc.View(app, onboarding.ViewOptions{Links: true, LinkHoles: true})
	if err != nil {
		return nil, err
	}
	w := jsonWriter{}
	w.view(&view)
	if w.err != nil {
		return nil, w.err
	}
	r := &renderedView{text: slices.Clone(w.b), holes: slices.Clone(w.holes)}
	m.put(key, app, r)
	return r, nil
}

// viewMemo keeps the rendered answers of the applications the store shares
// with its readers, by application. The store never changes an
// application it has shared (a new version is a new application), so an
// answer is right for as long as its application lives. Keys are weak
// pointers, which keep no application alive, and an answer is dropped when
// its application is collected (runtime.AddCleanup): the memo holds the
// answers of about the applications the store's cache holds. Its budget
// bounds it regardless: to make room it evicts answers in Go's map order,
// which is random.
type viewMemo struct {
	mu      sync.Mutex
	budget  int // bytes (renderedView.size); 0 keeps nothing
	size    int
	answers map[weak.Pointer[onboarding.Application]]*renderedView
}

func newViewMemo(budget int) *viewMemo {
	return &viewMemo{budget: budget, answers: map[weak.Pointer[onboarding.Application]]*renderedView{}}
}

// get returns the answer kept for key's application, or nil.
func (m *viewMemo) get(key weak.Pointer[onboarding.Application]) *renderedView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answers[key]
}

// put keeps r as app's answer under key (weak.Make(app)) until app is
// collected or r is evicted, unless an answer is kept already or r is
// larger than a quarter of the budget.
func (m *viewMemo) put(key weak.Pointer[onboarding.Application], app *onboarding.Application, r *renderedView) {
	n := r.size()
	if n > m.budget/4 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.answers[key]; ok {
		return
	}
	for k, old := range m.answers {
		if m.size+n <= m.budget {
			break
		}
		m.size -= old.size()
		delete(m.answers, k)
	}
	m.answers[key] = r
	m.size += n
	// An answer evicted and kept again registers a second cleanup; the
	// first to run forgets it, the other finds nothing.
	runtime.AddCleanup(app, m.forget, key)
}

// forget drops key's answer, if any.
func (m *viewMemo) forget(key weak.Pointer[onboarding.Application]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.answers[key]; ok {
		m.size -= r.size()
		delete(m.answers, key)
	}
}

// clear drops every answer.
func (m *viewMemo) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.answers)
	m.size = 0
}

// ForgetRendered drops every get-application answer kept rendered, for a
// server gone idle to hand its memory back: the next get of each
// application renders it again.
func (s *Server) ForgetRendered() {
	s.views.clear()
}
