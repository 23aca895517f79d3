package apikey_test

import (
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/apikey"
)

func TestParse(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	cases := []struct {
		key, env string
		err      error
	}{
		{"fhk_test_" + hex64, "test", nil},
		{"fhk_live_" + hex64, "live", nil},
		{"", "", apikey.ErrMissingPrefix},
		{"sk_test_" + hex64, "", apikey.ErrMissingPrefix},
		{"fhk_prod_" + hex64, "", apikey.ErrMalformed},
		{"fhk_test_" + hex64[:63], "", apikey.ErrMalformed},
		{"fhk_test_" + hex64 + "0", "", apikey.ErrMalformed},
		{"fhk_test_" + strings.ToUpper(hex64), "", apikey.ErrMalformed},
		{"fhk_test_" + hex64[:63] + "g", "", apikey.ErrMalformed},
	}
	for _, c := range cases {
		env, err := apikey.Parse(c.key)
		if err != c.err || env != c.env {
			t.Errorf("Parse(%q) = %q, %v; want %q, %v", c.key, env, err, c.env, c.err)
		}
	}
}

func TestGenerateAndHash(t *testing.T) {
	h, err := apikey.NewHasher([]byte("0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := apikey.Generate("test")
	k2, _ := apikey.Generate("live")
	if _, err := apikey.Parse(k1); err != nil {
		t.Fatalf("generated %q: %v", k1, err)
	}
	if env, _ := apikey.Parse(k2); env != "live" {
		t.Fatalf("env of %q", k2)
	}
	if _, err := apikey.Generate("prod"); err == nil {
		t.Fatal("generated a prod key")
	}
	if !apikey.Equal(h.Sum(k1), h.Sum(k1)) || apikey.Equal(h.Sum(k1), h.Sum(k2)) {
		t.Fatal("hash not stable or collides")
	}
	other, _ := apikey.NewHasher([]byte("another-secret-of-20"))
	if apikey.Equal(h.Sum(k1), other.Sum(k1)) {
		t.Fatal("hash ignores the secret")
	}
	if _, err := apikey.NewHasher([]byte("short")); err == nil {
		t.Fatal("short secret accepted")
	}
	if n := testing.AllocsPerRun(100, func() { h.Sum(k1) }); n != 0 && !raceEnabled {
		t.Errorf("Sum allocates %v", n)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("fhk_test_" + strings.Repeat("a", 64))
	f.Add("fhk_live_" + strings.Repeat("0", 64))
	f.Add("fhk_")
	f.Add("")
	f.Fuzz(func(t *testing.T, key string) {
		env, err := apikey.Parse(key)
		if err != nil {
			if env != "" {
				t.Fatalf("error with env %q", env)
			}
			return
		}
		if env != "test" && env != "live" {
			t.Fatalf("env %q", env)
		}
		if len(key) != apikey.Length || key != strings.ToLower(key) {
			t.Fatalf("accepted %q", key)
		}
	})
}

func BenchmarkSum(b *testing.B) {
	h, _ := apikey.NewHasher([]byte("0123456789abcdef0123"))
	k, _ := apikey.Generate("test")
	b.ReportAllocs()
	for b.Loop() {
		h.Sum(k)
	}
}
