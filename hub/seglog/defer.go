package seglog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runFile, with DeferSync, holds the boot of the machine the directory's
// current run began on; Close removes it once everything is on disk.
const runFile = "run"

// bootIDPath names the running kernel's boot: it changes on every boot
// of the machine.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// Sync puts on disk whatever the log wrote without an fsync (DeferSync)
// and returns once it is there: every record whose Append returned
// before Sync was called is durable when it returns nil. Without
// DeferSync, or without a directory, there is nothing to do. Once an
// fsync failed, every later Sync fails too: the kernel may have dropped
// the records it could not write, so nothing may be recorded as durable
// after them. On a closed log Sync returns nil (Close synced it).
func (l *Log) Sync(ctx context.Context) error {
	if l.cfg.Dir == "" || !l.cfg.DeferSync {
		return nil
	}
	_, err := l.submit(ctx, &request{sync: true, done: make(chan error, 1)}, "sync")
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// syncRound ends a round's write: an fsync of the active segment, with
// DeferSync only when a request of the round asks for one (wrote says
// whether this round wrote anything).
func (l *Log) syncRound(round []*request, wrote bool) error {
	if !l.cfg.DeferSync {
		return l.syncSegment()
	}
	if wrote {
		l.unsynced = true
	}
	for _, r := range round {
		if r.sync {
			return l.syncActive()
		}
	}
	return nil
}

// syncActive fsyncs the active segment if it has unsynced writes; a
// failure sticks (see Sync). The round's writer only, or after the writer
// goroutine ended.
func (l *Log) syncActive() error {
	if l.syncErr != nil {
		return l.syncErr
	}
	if !l.unsynced || l.active == nil {
		return nil
	}
	if err := l.syncSegment(); err != nil {
		l.syncErr = fmt.Errorf("seglog: sync: %w", err)
		l.cfg.Logger.Error("segment log: fsync failed; nothing written since the last good one counts as durable until a restart", "dir", l.cfg.Dir, "error", err)
		return l.syncErr
	}
	l.unsynced = false
	return nil
}

// checkRun, with DeferSync, decides at open whether the directory's
// history goes on: a run file left by a run that did not Close on
// another boot of the machine means records it wrote may never have
// reached the disk, so the directory starts a new epoch. It then
// records this run's boot.
func (l *Log) checkRun() error {
	path := filepath.Join(l.cfg.Dir, runFile)
	boot := bootID()
	prev, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("seglog: %w", err)
	case boot == "" || strings.TrimSpace(string(prev)) != boot:
		l.epoch = newEpoch()
		l.cfg.Logger.Warn("log directory was not closed before the machine restarted: records written without an fsync may be lost, so its history starts a new epoch",
			"dir", l.cfg.Dir, "epoch", l.epoch)
		if err := writeFileSync(filepath.Join(l.cfg.Dir, epochFile), []byte(l.epoch+"\n")); err != nil {
			return err
		}
	}
	return writeFileSync(path, []byte(boot+"\n"))
}

// closedCleanly removes the run file once everything is on disk.
func (l *Log) closedCleanly() error {
	if err := os.Remove(filepath.Join(l.cfg.Dir, runFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("seglog: %w", err)
	}
	return syncDir(l.cfg.Dir)
}

// bootID is the running kernel's boot id, "" where there is none (then
// every run not closed counts as lost to a restart).
func bootID() string {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
