// Package mod holds the cases of errcheck's test: each line that must be
// reported ends with a comment "want".
package mod

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

type plain struct {
	Name string
	N    int
	Tags []string
	Sub  *struct{ On bool }
}

type withFloat struct{ V float64 }

func fails() error             { return nil }
func pair() (int, error)       { return 0, nil }
func notAnError() (int, bool)  { return 0, false }
func generic[T any](v T) error { return nil }

func cases(c net.Conn, res *http.Response, m map[string]int, v any) {
	_ = fails()                      // want
	n, _ := pair()                   // want
	_, _ = pair()                    // want
	_ = generic(1)                   // want
	_ = generic[string]("x")         // want
	_, _ = strconv.Atoi("1")         // want
	_, _ = json.Marshal(v)           // want
	_, _ = json.Marshal(withFloat{}) // want
	_ = os.Remove("x")               // want
	var _ = fails()                  // want
	f := fails
	_ = f() // want

	// not reported: no error given to _, or a call on the allow-list
	_, ok := m["k"]
	_, _ = notAnError()
	var b strings.Builder
	_, _ = b.WriteString("x")
	_, _ = fmt.Fprintf(&b, "%d", n)
	var buf bytes.Buffer
	_, _ = buf.Write(nil)
	h := sha256.New()
	_, _ = h.Write(nil)
	_, _ = fmt.Fprint(h, "x")
	_, _ = rand.Read(make([]byte, 4))
	_ = res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	_ = c.SetDeadline(time.Time{})
	_, _ = json.Marshal(plain{})
	_, _ = json.Marshal("s")
	_ = ok
}
