package onboarding

import (
	"runtime"
	"slices"
	"sync"
	"weak"
)

// renderedViewsBytes is the budget of the rendered-answers memo
// (viewMemo), in bytes of answers: as much as the store's cache of decoded
// applications keeps of their JSON by default, since the memo renders the
// applications that cache shares.
const renderedViewsBytes = 8 << 20

// renderedView is an application's get-application answer (spec 4.4)
// rendered once: its JSON with a hole where the value of each download_url
// goes. Every answer fills the holes with links signed then, since each
// link is valid for DocumentLinkTTL from the moment it is answered.
// Rendering the rest (View and AppendJSON) took a sixth of a get's time.
type renderedView struct {
	text  []byte
	holes []linkHole // in order of at
}

// linkHole is where a download_url's value goes in a rendered view.
type linkHole struct {
	at   int // offset in the text
	link signedLink
}

// renderedOverhead is what the memo counts for a rendered view and for each
// hole besides the text: their structs and strings' headers, and a map
// entry.
const renderedOverhead = 128

// size is what r counts against the memo's budget.
func (r *renderedView) size() int {
	return len(r.text) + renderedOverhead*(1+len(r.holes))
}

// appendRendered appends r to dst with every hole filled with its link
// signed now.
func (s *Service) appendRendered(dst []byte, r *renderedView) []byte {
	w := jsonWriter{b: dst}
	last := 0
	for _, h := range r.holes {
		w.b = append(w.b, r.text[last:h.at]...)
		w.str(s.sign(h.link))
		last = h.at
	}
	w.b = append(w.b, r.text[last:]...)
	return w.b
}

// rendered returns app's get-application answer rendered, from the memo
// when it has rendered app before. app must be as the store shares it
// (Store.ReadApplication): never changed.
func (s *Service) rendered(app *Application) (*renderedView, error) {
	key := weak.Make(app)
	if r := s.views.get(key); r != nil {
		return r, nil
	}
	view, err := s.View(app, ViewOptions{Links: true, linkHoles: true})
	if err != nil {
		return nil, err
	}
	w := jsonWriter{}
	view.write(&w)
	if w.err != nil {
		return nil, w.err
	}
	r := &renderedView{text: slices.Clone(w.b), holes: slices.Clone(w.holes)}
	s.views.put(key, app, r)
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
	answers map[weak.Pointer[Application]]*renderedView
}

func newViewMemo(budget int) *viewMemo {
	return &viewMemo{budget: budget, answers: map[weak.Pointer[Application]]*renderedView{}}
}

// get returns the answer kept for key's application, or nil.
func (m *viewMemo) get(key weak.Pointer[Application]) *renderedView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answers[key]
}

// put keeps r as app's answer under key (weak.Make(app)) until app is
// collected or r is evicted, unless an answer is kept already or r is
// larger than a quarter of the budget.
func (m *viewMemo) put(key weak.Pointer[Application], app *Application, r *renderedView) {
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
func (m *viewMemo) forget(key weak.Pointer[Application]) {
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
func (s *Service) ForgetRendered() {
	s.views.clear()
}
