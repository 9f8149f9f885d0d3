//go:build unix

package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/storetest"
)

// TestSQLiteFilesArePrivate: the database and its -wal and -shm files
// hold customer names, emails and IP addresses, so they are created 0600
// even under the common umask 022, which would leave them 0644.
func TestSQLiteFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // not parallel: no other test runs meanwhile
	t.Cleanup(func() { syscall.Umask(old) })
	path := filepath.Join(t.TempDir(), "paylink.db")
	st, err := sqlstore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.NewMerchant(t, st) // a write, so the WAL holds data
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("got mode %v, want 0600", got)
			}
		})
	}
}
