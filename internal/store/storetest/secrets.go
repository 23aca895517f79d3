package storetest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// secrets is the contract of store.Secrets.
func secrets(t *testing.T, open Opener) {
	t.Run("GetOrCreate", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		first := []byte("first value \x00\xff")
		var calls int
		got, err := s.Secret(t.Context(), "signing", func() ([]byte, error) { calls++; return first, nil })
		if err != nil {
			t.Fatalf("first Secret: %v", err)
		}
		if !bytes.Equal(got, first) || calls != 1 {
			t.Fatalf("first Secret = %q after %d gen calls, want %q after 1", got, calls, first)
		}
		got, err = s.Secret(t.Context(), "signing", func() ([]byte, error) {
			t.Error("gen called for a stored secret")
			return []byte("second value"), nil
		})
		if err != nil {
			t.Fatalf("second Secret: %v", err)
		}
		if !bytes.Equal(got, first) {
			t.Errorf("second Secret = %q, want the stored %q", got, first)
		}
		other, err := s.Secret(t.Context(), "other", func() ([]byte, error) { return []byte("other value"), nil })
		if err != nil {
			t.Fatalf("Secret(other): %v", err)
		}
		if string(other) != "other value" {
			t.Errorf("Secret(other) = %q, want %q", other, "other value")
		}
	})

	t.Run("GenErrorStoresNothing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		boom := errors.New("entropy ran out")
		if _, err := s.Secret(t.Context(), "signing", func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Fatalf("Secret with a failing gen: %v, want it to wrap %v", err, boom)
		}
		got, err := s.Secret(t.Context(), "signing", func() ([]byte, error) { return []byte("value"), nil })
		if err != nil {
			t.Fatalf("Secret after a failed gen: %v", err)
		}
		if string(got) != "value" {
			t.Errorf("Secret after a failed gen = %q, want %q", got, "value")
		}
	})

	t.Run("ConcurrentCallersAgree", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		const callers = 8
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			gens  atomic.Int32
			got   [callers][]byte
			errs  [callers]error
		)
		for i := range callers {
			wg.Go(func() {
				<-start
				got[i], errs[i] = s.Secret(t.Context(), "signing", func() ([]byte, error) {
					gens.Add(1)
					return []byte(rand.Text()), nil // a different value per caller
				})
			})
		}
		close(start)
		wg.Wait()
		for i := range callers {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if !bytes.Equal(got[i], got[0]) {
				t.Errorf("caller %d got %q, caller 0 got %q", i, got[i], got[0])
			}
		}
		if gens.Load() == 0 {
			t.Error("gen never called")
		}
		again, err := s.Secret(t.Context(), "signing", func() ([]byte, error) { return []byte("late"), nil })
		if err != nil {
			t.Fatalf("Secret after the race: %v", err)
		}
		if !bytes.Equal(again, got[0]) {
			t.Errorf("Secret after the race = %q, want %q", again, got[0])
		}
	})
}
