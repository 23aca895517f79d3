package geocode

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"
)

// Config says where the addresses come from and where the index is kept.
type Config struct {
	// Files are the address files, in the layouts of readSource.
	Files []string
	// Dir is the data directory: the index is saved under Dir/geocode and
	// read back on the next start when the files have not changed. Empty:
	// nothing is saved.
	Dir string
	// Logger; nil discards.
	Logger *slog.Logger
}

// Open loads the index of cfg.Files: from its saved copy when one made
// from the same file contents is under cfg.Dir and reads back intact,
// otherwise by parsing the files (and then saving it; a failure to save
// is logged, not returned).
func Open(cfg Config) (*Index, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(cfg.Files) == 0 {
		return nil, errors.New("geocode: no address files")
	}
	if cfg.Dir == "" {
		return Load(cfg.Files...)
	}
	start := time.Now()
	key, err := sourceKey(cfg.Files)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.Dir, "geocode")
	path := filepath.Join(dir, savedName(key))
	if data, err := os.ReadFile(path); err == nil {
		ix, err := readSaved(data, key)
		if err == nil {
			debug.FreeOSMemory() // the file's bytes, read whole, are garbage now
			log.Info("geocode: saved index read", "path", path, "addresses", ix.Len(), "took", time.Since(start).Round(time.Millisecond))
			return ix, nil
		}
		log.Warn("geocode: saved index not trusted, rebuilding", "path", path, "err", err)
	}
	ix, err := Load(cfg.Files...)
	if err != nil {
		return nil, err
	}
	debug.FreeOSMemory() // what building took (1.6 GB at five million addresses) goes back
	log.Info("geocode: index built", "addresses", ix.Len(), "took", time.Since(start).Round(time.Millisecond))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Warn("geocode: index not saved", "err", err)
		return ix, nil
	}
	if err := writeSaved(path, key, ix); err != nil {
		log.Warn("geocode: index not saved", "path", path, "err", err)
		return ix, nil
	}
	removeStale(dir, filepath.Base(path))
	return ix, nil
}
