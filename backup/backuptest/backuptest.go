// Package backuptest holds fixtures for the tests of backups and of the
// commands that make and restore them: an application that refers to a
// blob, and hand-made archives. Only tests import it.
package backuptest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// AppWithFile is an application whose certificate of incorporation is
// the blob id.
func AppWithFile(id string) *onboarding.Application {
	now := time.Now().UTC()
	return &onboarding.Application{
		ID: uuid.NewString(), Seq: ulid.Make(), OrgID: "default", ConfigID: "default", Country: "GB",
		Status: onboarding.StatusInProgress, CreatedAt: now, UpdatedAt: now,
		Data: onboarding.Data{
			Fields: map[string]json.RawMessage{"company_name": json.RawMessage(`"HELD LIMITED"`)},
			Documents: map[string]onboarding.Document{"certificate_of_incorporation": {
				FileID: uuid.NewString(), FileName: "c.pdf", FileType: "application/pdf", UploadedAt: now,
				Status: onboarding.DocumentAccepted, BlobID: id, Size: 9,
			}},
		},
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: strings.ReplaceAll(uuid.NewString(), "-", ""),
			Email: "a@example.com", Role: onboarding.RolePrimary}},
	}
}

// Entry is one entry of a hand-made archive.
type Entry struct {
	Name    string
	Content string
}

// TarGz packs entries, in order, into a gzip-compressed tar stream.
func TarGz(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.Name, Size: int64(len(e.Content)), Mode: 0o600}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.Content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
