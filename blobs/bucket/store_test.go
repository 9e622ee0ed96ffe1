package bucket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/blobs/bucket"
	"onboard/blobs/bucket/buckettest"
	"onboard/onboarding"
)

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	good := bucket.Options{Endpoint: "http://127.0.0.1:7070", Bucket: "b", AccessKeyID: "k", SecretAccessKey: "s"}
	tests := []struct {
		name   string
		change func(o *bucket.Options)
		want   string
	}{
		{"no endpoint", func(o *bucket.Options) { o.Endpoint = "" }, "no endpoint"},
		{"not a URL", func(o *bucket.Options) { o.Endpoint = "127.0.0.1:7070" }, "not an http:// or https:// URL"},
		{"ftp", func(o *bucket.Options) { o.Endpoint = "ftp://example.com" }, "not an http:// or https:// URL"},
		{"no bucket", func(o *bucket.Options) { o.Bucket = "" }, "no bucket"},
		{"no key id", func(o *bucket.Options) { o.AccessKeyID = "" }, "no access key id"},
		{"no secret", func(o *bucket.Options) { o.SecretAccessKey = "" }, "no access key id or secret access key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.change(&o)
			if _, err := bucket.New(o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v; want an error saying %q", err, tt.want)
			}
		})
	}
	if _, err := bucket.New(good); err != nil {
		t.Errorf("New(complete options): %v", err)
	}
}

// TestPrefix: blobs are objects prefix/id, a prefix gets its "/", and
// stores under two prefixes do not see each other's blobs.
func TestPrefix(t *testing.T) {
	o := buckettest.Options(t)
	o.Prefix = strings.TrimSuffix(o.Prefix, "/")
	a, err := bucket.New(o)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := a.Put(context.Background(), strings.NewReader("a"), 10)
	if err != nil {
		t.Fatal(err)
	}
	o.Prefix += "/"
	if diff := cmp.Diff([]string{o.Prefix + id}, buckettest.Keys(t, o)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	b, _ := openStore(t)
	if _, err := b.Open(id); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Open of another prefix's blob: %v; want ErrNotFound", err)
	}
	if err := b.Delete(id); err != nil {
		t.Fatal(err)
	}
	if f, err := a.Open(id); err != nil {
		t.Errorf("a blob deleted through another prefix: %v", err)
	} else {
		f.Close()
	}
}

// TestWalkSkipsOtherObjects: Walk reports the blobs directly under the
// prefix, not other objects there nor blob ids deeper down.
func TestWalkSkipsOtherObjects(t *testing.T) {
	s, o := openStore(t)
	id, _, err := s.Put(context.Background(), strings.NewReader("blob"), 10)
	if err != nil {
		t.Fatal(err)
	}
	c := buckettest.Client(o)
	for _, key := range []string{o.Prefix + "notes.txt", o.Prefix + "sub/" + uuid.NewString(), o.Prefix + strings.ToUpper(uuid.NewString())} {
		if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &o.Bucket, Key: aws.String(key), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := s.Walk(func(id string, _ time.Time) error { got = append(got, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{id}, got); diff != "" {
		t.Errorf("Walk (-want +got):\n%s", diff)
	}
}

// TestMultipart: content over a part goes up in parts (an S3 multipart
// object's ETag ends in -parts), and no upload is left in progress after
// puts that fail at any stage.
func TestMultipart(t *testing.T) {
	const part = 5 << 20
	s, o := openStore(t)
	ctx := context.Background()
	content := randomBytes(2*part+7, 1)
	id, _, err := s.Put(ctx, bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	head, err := buckettest.Client(o).HeadObject(ctx, &s3.HeadObjectInput{Bucket: &o.Bucket, Key: aws.String(o.Prefix + id)})
	if err != nil {
		t.Fatal(err)
	}
	if etag := aws.ToString(head.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-3") {
		t.Errorf("ETag %s; want the ETag of a 3-part upload", etag)
	}
	if aws.ToInt64(head.ContentLength) != int64(len(content)) {
		t.Errorf("stored %d bytes; want %d", aws.ToInt64(head.ContentLength), len(content))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	failing := []func() error{
		func() error { _, _, err := s.Put(ctx, bytes.NewReader(content), part+10); return err },
		func() error { _, _, err := s.Put(ctx, bytes.NewReader(content), 2*part); return err },
		func() error {
			_, _, err := s.Put(ctx, io.MultiReader(bytes.NewReader(content[:part+10]), errorReader{}), 1<<30)
			return err
		},
		func() error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, _, err := s.Put(ctx, io.MultiReader(bytes.NewReader(content[:part+10]), cancelReader{cancel}), 1<<30)
			return err
		},
		func() error { _, _, err := s.Put(cancelled, bytes.NewReader(content), 1<<30); return err },
	}
	for i, put := range failing {
		if err := put(); err == nil {
			t.Fatalf("failing put %d succeeded", i)
		}
	}
	if diff := cmp.Diff([]string{o.Prefix + id}, buckettest.Keys(t, o)); diff != "" {
		t.Errorf("objects after failed puts (-want +got):\n%s", diff)
	}
	if up := buckettest.Uploads(t, o); len(up) != 0 {
		t.Errorf("uploads left in progress: %v", up)
	}
}

// errorReader fails every read.
type errorReader struct{}

func (errorReader) Read([]byte) (int, error) { return 0, errors.New("broken reader") }

// cancelReader cancels its context at its first read, and ends.
type cancelReader struct{ cancel context.CancelFunc }

func (c cancelReader) Read(p []byte) (int, error) {
	c.cancel()
	return 0, io.EOF
}

// TestWalkAbortsStaleUploads: the uploads of blobs under the prefix begun
// before the cutoff are aborted; others, and objects, stay.
func TestWalkAbortsStaleUploads(t *testing.T) {
	s, o := openStore(t)
	ctx := context.Background()
	c := buckettest.Client(o)
	blob, _, err := s.Put(ctx, strings.NewReader("kept"), 10)
	if err != nil {
		t.Fatal(err)
	}
	stale := o.Prefix + uuid.NewString()
	other := o.Prefix + "not-a-blob"
	for _, key := range []string{stale, other} {
		if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &o.Bucket, Key: aws.String(key)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.AbortStaleUploads(ctx, time.Now().Add(-time.Hour)); n != 0 {
		t.Errorf("aborted %d uploads begun within the hour", n)
	}
	if n := s.AbortStaleUploads(ctx, time.Now().Add(time.Hour)); n != 1 {
		t.Errorf("aborted %d uploads; want the blob's one", n)
	}
	if diff := cmp.Diff([]string{other}, buckettest.Uploads(t, o)); diff != "" {
		t.Errorf("uploads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{o.Prefix + blob}, buckettest.Keys(t, o)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// TestCheck: a usable bucket passes and keeps no probe; each way of being
// unusable that a test server can show is told in the operator's words.
func TestCheck(t *testing.T) {
	good := buckettest.Options(t)
	closed := closedPort(t)
	tests := []struct {
		name   string
		change func(o *bucket.Options)
		want   string // in the error; "" for none
	}{
		{"usable", func(*bucket.Options) {}, ""},
		{"usable with a prefix without its slash", func(o *bucket.Options) { o.Prefix = strings.TrimSuffix(o.Prefix, "/") }, ""},
		{"unreachable", func(o *bucket.Options) { o.Endpoint = "http://" + closed }, "the endpoint http://" + closed + " is unreachable"},
		{"missing bucket", func(o *bucket.Options) { o.Bucket = "onboard-no-such-bucket" }, `the bucket "onboard-no-such-bucket" does not exist at ` + good.Endpoint + "; onboard does not create buckets"},
		{"wrong secret", func(o *bucket.Options) { o.SecretAccessKey += "x" }, "wrong credentials"},
		{"unknown key", func(o *bucket.Options) { o.AccessKeyID = "onboard-nobody" }, "wrong credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.change(&o)
			s, err := bucket.New(o)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Check(context.Background())
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check: %v; want an error saying %q", err, tt.want)
			} else {
				t.Log(err)
			}
		})
	}
	if keys := buckettest.Keys(t, good); len(keys) != 0 {
		t.Errorf("objects left by Check: %v", keys)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _ := bucket.New(good)
	if err := s.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a cancelled context: %v", err)
	}
}

// TestCheckReadOnly: a key that may read but not write is refused with
// the permission it lacks. It needs a second gateway over the test bucket
// that refuses every write (versitygw --readonly), named by
// ONBOARD_TEST_S3_READONLY_ENDPOINT, which .ci/services starts.
func TestCheckReadOnly(t *testing.T) {
	o := buckettest.Options(t)
	ep := os.Getenv("ONBOARD_TEST_S3_READONLY_ENDPOINT")
	if ep == "" && os.Getenv("CI") == "true" {
		t.Fatal("ONBOARD_TEST_S3_READONLY_ENDPOINT is not set: CI must run this test (.ci/services start)")
	}
	if ep == "" {
		t.Skip("ONBOARD_TEST_S3_READONLY_ENDPOINT is not set: no read-only gateway (versitygw --readonly) over the test bucket")
	}
	o.Endpoint = ep
	s, err := bucket.New(o)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Check(context.Background())
	if want := "no permission to write"; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "s3:PutObject") {
		t.Fatalf("Check: %v; want an error saying %q and naming s3:PutObject", err, want)
	}
}

// closedPort returns a local address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestPartSize(t *testing.T) {
	tests := []struct {
		max  int64
		want int
	}{
		{0, 5 << 20},
		{25 << 20, 5 << 20},
		{10_000 * 5 << 20, 5 << 20},
		{10_000*5<<20 + 10_000, 5<<20 + 1},
		{1 << 40, 1<<40/10_000 + 1},
		{math.MaxInt64, 5 << 30},
	}
	for _, tt := range tests {
		if got := bucket.PartSizeFor(tt.max); got != tt.want {
			t.Errorf("part size for %d = %d; want %d", tt.max, got, tt.want)
		}
		if got := bucket.PartSizeFor(tt.max); int64(got)*10_000 < tt.max && got < 5<<30 {
			t.Errorf("part size for %d = %d: too many parts", tt.max, got)
		}
	}
}
