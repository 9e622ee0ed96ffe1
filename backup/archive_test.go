package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/backup/backuptest"
	"onboard/storage/dump"
)

// sumOf is the archive entry of content at p.
func sumOf(p, content string) File {
	sum := sha256.Sum256([]byte(content))
	return File{Path: p, Bytes: int64(len(content)), SHA256: hex.EncodeToString(sum[:])}
}

const (
	testBlobID  = "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90"
	testRecords = "records"
	testBlob    = "%PDF-1.4 blob"
	testSecret  = "c2VjcmV0"
)

// validManifest is the manifest of the archive validEntries makes.
func validManifest() *Manifest {
	return &Manifest{
		Format: archiveFormat, FormatVersion: archiveVersion, OnboardVersion: "(devel)",
		CreatedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC),
		Counts: Counts{Records: 3, Kinds: map[string]int{dump.Application: 3}, RecordBytes: int64(len(testRecords)),
			Blobs: 1, BlobBytes: int64(len(testBlob)), Secrets: 1},
		Files: []File{
			sumOf(recordsName, testRecords), sumOf("secrets/session.key", testSecret), sumOf(blobPath(testBlobID), testBlob),
		},
		MissingBlobs: []string{},
	}
}

// manifestEntry is m as an archive's first entry.
func manifestEntry(t *testing.T, m *Manifest) backuptest.Entry {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return backuptest.Entry{Name: manifestName, Content: string(b)}
}

// validEntries are the files of validManifest, in order.
func validEntries() []backuptest.Entry {
	return []backuptest.Entry{
		{Name: recordsName, Content: testRecords},
		{Name: "secrets/session.key", Content: testSecret},
		{Name: blobPath(testBlobID), Content: testBlob},
	}
}

// TestArchiveRoundTrip writes an archive with archiveWriter and reads it
// back: the manifest and every entry's content come back as written.
func TestArchiveRoundTrip(t *testing.T) {
	m := validManifest()
	var buf bytes.Buffer
	aw, err := newArchiveWriter(&buf, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range validEntries() {
		if err := aw.add(e.Name, int64(len(e.Content)), strings.NewReader(e.Content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := aw.close(); err != nil {
		t.Fatal(err)
	}
	var got []backuptest.Entry
	read, err := ReadArchive(&buf, func(f File, content io.Reader) error {
		b, err := io.ReadAll(content)
		got = append(got, backuptest.Entry{Name: f.Path, Content: string(b)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, read); diff != "" {
		t.Errorf("manifest (-written +read):\n%s", diff)
	}
	if diff := cmp.Diff(validEntries(), got); diff != "" {
		t.Errorf("entries (-written +read):\n%s", diff)
	}
}

// TestArchiveWriterRefusesShortContent checks that an entry whose reader
// yields fewer bytes than announced fails instead of making a bad archive.
func TestArchiveWriterRefusesShortContent(t *testing.T) {
	aw, err := newArchiveWriter(&bytes.Buffer{}, validManifest())
	if err != nil {
		t.Fatal(err)
	}
	err = aw.add(recordsName, 10, strings.NewReader("short"))
	if err == nil || !strings.HasPrefix(err.Error(), "write records.ndjson: ") {
		t.Errorf("add: %v, want a failure to write records.ndjson", err)
	}
}

// TestReadArchiveRefusals feeds ReadArchive archives that are not onboard
// backups, of another version, or damaged in each way it checks, and
// asserts the exact explanation of each.
func TestReadArchiveRefusals(t *testing.T) {
	valid := func(change func(m *Manifest)) backuptest.Entry {
		m := validManifest()
		if change != nil {
			change(m)
		}
		return manifestEntry(t, m)
	}
	entries := validEntries()
	withManifest := func(m backuptest.Entry, rest ...backuptest.Entry) []byte {
		return backuptest.TarGz(t, append([]backuptest.Entry{m}, rest...)...)
	}
	whole := withManifest(valid(nil), entries...)
	tests := []struct {
		name    string
		archive []byte
		want    string
	}{
		{"empty input", nil, "empty"},
		{"not gzip", []byte("hello, world"), "not an onboard backup (not gzip-compressed)"},
		{"no entries", backuptest.TarGz(t), "not an onboard backup (no manifest)"},
		{"manifest not first", backuptest.TarGz(t, entries...), "not an onboard backup (its first entry is not manifest.json)"},
		{"another format", withManifest(valid(func(m *Manifest) { m.Format = "tarball" }), entries...),
			`not an onboard backup (its manifest's format is "tarball")`},
		{"newer version", withManifest(valid(func(m *Manifest) { m.FormatVersion = 3 }), entries...),
			"a backup of format version 3; this onboard reads versions 1 to 2"},
		{"version 0", withManifest(valid(func(m *Manifest) { m.FormatVersion = 0 }), entries...),
			"a backup of format version 0; this onboard reads versions 1 to 2"},
		{"version 1 with version 2 records", withManifest(valid(func(m *Manifest) { m.FormatVersion = 1 }), entries...),
			"damaged: its manifest does not list records.badger first"},
		{"manifest not JSON", backuptest.TarGz(t, backuptest.Entry{Name: manifestName, Content: "{"}), "damaged: its manifest is not valid JSON: unexpected end of JSON input"},
		{"records not first", withManifest(valid(func(m *Manifest) { m.Files[0], m.Files[1] = m.Files[1], m.Files[0] })),
			"damaged: its manifest does not list records.ndjson first"},
		{"path outside", withManifest(valid(func(m *Manifest) { m.Files[1].Path = "secrets/../../etc/passwd" })),
			`damaged: its manifest lists an invalid or repeated path "secrets/../../etc/passwd"`},
		{"blob in the wrong shard", withManifest(valid(func(m *Manifest) { m.Files[2].Path = "blobs/00/00/" + testBlobID })),
			`damaged: its manifest lists an invalid or repeated path "blobs/00/00/` + testBlobID + `"`},
		{"repeated path", withManifest(valid(func(m *Manifest) { m.Files = append(m.Files, m.Files[2]) })),
			`damaged: its manifest lists an invalid or repeated path "` + blobPath(testBlobID) + `"`},
		{"bad checksum form", withManifest(valid(func(m *Manifest) { m.Files[2].SHA256 = strings.ToUpper(m.Files[2].SHA256) })),
			"damaged: its manifest has an invalid size or checksum for " + blobPath(testBlobID)},
		{"counts", withManifest(valid(func(m *Manifest) { m.Counts.Blobs = 2 }), entries...),
			"damaged: its manifest's counts do not match its files"},
		{"record counts", withManifest(valid(func(m *Manifest) { m.Counts.Records = 4 }), entries...),
			"damaged: its manifest's counts do not match its files"},
		{"unknown kind counted", withManifest(valid(func(m *Manifest) { m.Counts.Kinds["invoice"] = 0 }), entries...),
			`damaged: its manifest counts 0 records of the unknown kind "invoice"`},
		{"entry missing", withManifest(valid(nil), entries[:2]...), "damaged: " + blobPath(testBlobID) + " is missing"},
		{"entries out of order", withManifest(valid(nil), entries[0], entries[2], entries[1]),
			"damaged: found " + blobPath(testBlobID) + " where the manifest names secrets/session.key"},
		{"wrong size", withManifest(valid(nil), entries[0], entries[1], backuptest.Entry{Name: blobPath(testBlobID), Content: testBlob + "!"}),
			"damaged: " + blobPath(testBlobID) + " has 14 bytes; the manifest says 13"},
		{"changed content", withManifest(valid(nil), entries[0], entries[1], backuptest.Entry{Name: blobPath(testBlobID), Content: "%PDF-1.4 BLOB"}),
			"damaged: " + blobPath(testBlobID) + " does not match its SHA-256 checksum"},
		{"extra entry", withManifest(valid(nil), append(entries, backuptest.Entry{Name: "extra", Content: "x"})...),
			"damaged: extra is not in the manifest"},
		{"truncated", whole[:len(whole)/2], "truncated"},
		{"gzip trailer", append(bytes.Clone(whole[:len(whole)-8]), 0, 0, 0, 0, 0, 0, 0, 0), "damaged: gzip: invalid checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadArchive(bytes.NewReader(tt.archive), nil)
			var ae ArchiveError
			if !errors.As(err, &ae) || err.Error() != tt.want {
				t.Errorf("ReadArchive: %v, want the ArchiveError %q", err, tt.want)
			}
		})
	}
	if _, err := ReadArchive(bytes.NewReader(whole), nil); err != nil {
		t.Errorf("the valid archive the cases start from: %v", err)
	}
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestReadArchiveReportsReadFailures checks that a failure to read the
// archive is that failure, not a verdict on the archive.
func TestReadArchiveReportsReadFailures(t *testing.T) {
	eio := errors.New("read backup.tar.gz: input/output error")
	whole := backuptest.TarGz(t, append([]backuptest.Entry{manifestEntry(t, validManifest())}, validEntries()...)...)
	for _, r := range []io.Reader{
		errReader{eio},
		io.MultiReader(bytes.NewReader(whole[:len(whole)/2]), errReader{eio}),
	} {
		if _, err := ReadArchive(r, nil); !errors.Is(err, eio) {
			t.Errorf("ReadArchive: %v, want %v", err, eio)
		}
	}
}

// TestReadArchiveReportsEntryFailures checks that a failure of the entry
// function (writing a restored file) is returned as it is.
func TestReadArchiveReportsEntryFailures(t *testing.T) {
	full := errors.New("write blob: no space left on device")
	whole := backuptest.TarGz(t, append([]backuptest.Entry{manifestEntry(t, validManifest())}, validEntries()...)...)
	_, err := ReadArchive(bytes.NewReader(whole), func(f File, _ io.Reader) error {
		if f.Path == blobPath(testBlobID) {
			return full
		}
		return nil
	})
	if !errors.Is(err, full) {
		t.Errorf("ReadArchive: %v, want %v", err, full)
	}
}
