package server

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"onboard/onboarding"
)

// memoAnswer is a rendered view of n bytes of text and no hole.
func memoAnswer(n int) *renderedView {
	return &renderedView{text: []byte(strings.Repeat("x", n))}
}

// TestViewMemoBudget checks that the memo keeps its answers within its
// budget, evicting others to make room, keeps the first answer of an
// application, and keeps none larger than a quarter of the budget.
func TestViewMemoBudget(t *testing.T) {
	one := memoAnswer(1000).size()
	m := newViewMemo(8 * one)
	apps := make([]*onboarding.Application, 20)
	for i := range apps {
		apps[i] = &onboarding.Application{ID: string(rune('a' + i))}
		m.put(weak.Make(apps[i]), apps[i], memoAnswer(1000))
		if m.size > m.budget {
			t.Fatalf("after %d answers the memo holds %d bytes, over its budget of %d", i+1, m.size, m.budget)
		}
	}
	if got := len(m.answers); got != 8 {
		t.Errorf("the memo keeps %d answers of a budget of 8, want 8", got)
	}
	last := weak.Make(apps[len(apps)-1])
	kept := m.get(last)
	if kept == nil {
		t.Fatal("the answer put last was evicted to make room for itself")
	}
	m.put(last, apps[len(apps)-1], memoAnswer(10))
	if m.get(last) != kept {
		t.Error("a second answer of an application replaced the first")
	}

	big := &onboarding.Application{ID: "big"}
	m.put(weak.Make(big), big, memoAnswer(2*one))
	if m.get(weak.Make(big)) != nil {
		t.Error("the memo kept an answer larger than a quarter of its budget")
	}

	m.clear()
	if len(m.answers) != 0 || m.size != 0 {
		t.Errorf("after clear the memo holds %d answers, %d bytes", len(m.answers), m.size)
	}
	runtime.KeepAlive(apps)
}

// TestViewMemoForgetsCollected checks that an answer goes once its
// application is collected, so that the memo keeps no answer of an
// application the store no longer holds.
func TestViewMemoForgetsCollected(t *testing.T) {
	m := newViewMemo(1 << 20)
	kept := &onboarding.Application{ID: "kept"}
	m.put(weak.Make(kept), kept, memoAnswer(100))
	gone := &onboarding.Application{ID: "gone"}
	m.put(weak.Make(gone), gone, memoAnswer(100))
	gone = nil
	want := memoAnswer(100).size()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC() // the cleanup runs after the collection that frees gone
		m.mu.Lock()
		n, size := len(m.answers), m.size
		m.mu.Unlock()
		if n == 1 && size == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after its application became garbage the memo holds %d answers, %d bytes; want 1, %d", n, size, want)
		}
		runtime.Gosched()
	}
	if m.get(weak.Make(kept)) == nil {
		t.Error("the answer of an application still in use is gone")
	}
	runtime.KeepAlive(kept)
}
