package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"onboard/blobs/bucket"
	"onboard/blobs/bucket/buckettest"
	"onboard/storage/postgres/pgtest"
)

// postgresConfig is a configuration file keeping the records in the
// database at url (none: the key is left out).
func postgresConfig(t *testing.T, url string) string {
	t.Helper()
	text := "[storage]\nbackend = \"postgres\"\n"
	if url != "" {
		text += fmt.Sprintf("postgres_url = %q\n", url)
	}
	return writeFile(t, "onboard.toml", text)
}

// serverExec runs sql on the test server's own database.
func serverExec(t *testing.T, sql string) error {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Server(t))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// testRole creates a login role on the test server, dropped when t ends,
// and returns its name; sql completes CREATE ROLE name (LOGIN ...).
func testRole(t *testing.T, sql string) string {
	t.Helper()
	name := "onboard_role_" + strings.ToLower(rand.Text()[:12])
	if err := serverExec(t, "CREATE ROLE "+name+" "+sql); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := serverExec(t, "DROP ROLE IF EXISTS "+name); err != nil {
			t.Errorf("drop role %s: %v", name, err)
		}
	})
	return name
}

// passwordRole creates a role that must log in with password (a member of
// onboard_password_auth, which .ci/services's pg_hba.conf asks for one).
func passwordRole(t *testing.T, password string) string {
	t.Helper()
	// Roles are the server's: tests running at once may both create it.
	if err := serverExec(t, `DO $$BEGIN
		CREATE ROLE onboard_password_auth NOLOGIN;
		EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
		END$$`); err != nil {
		t.Fatal(err)
	}
	return testRole(t, fmt.Sprintf("LOGIN PASSWORD '%s' IN ROLE onboard_password_auth", password))
}

// withUser is the URL u logging in as user with password (none: "").
func withUser(t *testing.T, u, user, password string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.User = url.User(user)
	if password != "" {
		parsed.User = url.UserPassword(user, password)
	}
	return parsed.String()
}

// TestConfigCheckPostgres: config check connects to the database as serve
// does and says what to fix when it cannot be used; a password never
// shows.
func TestConfigCheckPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.URL(t)
	parsed, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	withPath := func(path string) string {
		u := *parsed
		u.Path = path
		return u.String()
	}
	withSSLMode := func(mode string) string {
		u := *parsed
		q := u.Query()
		q.Set("sslmode", mode)
		u.RawQuery = q.Encode()
		return u.String()
	}
	const secret = "Right-Password-1"
	pwRole := passwordRole(t, secret)
	plainRole := testRole(t, "LOGIN")
	empty := pgtest.URL(t) // never migrated: the valid case migrates db
	unreachable := freeLoopback(t)
	tests := []struct {
		name   string
		url    string
		stderr string
	}{
		{"wrong password", withUser(t, db, pwRole, "Wrong-Password-2"),
			`onboard: storage.postgres_url: PostgreSQL refused the password (password authentication failed for user "` + pwRole + `"): check the password in the URL (or ONBOARD_POSTGRES_URL)` + "\n"},
		{"no password", withUser(t, db, pwRole, ""),
			`onboard: storage.postgres_url: PostgreSQL refused the password (password authentication failed for user "` + pwRole + `"): check the password in the URL (or ONBOARD_POSTGRES_URL)` + "\n"},
		{"missing database", withPath("/onboard_missing"),
			`onboard: storage.postgres_url: database "onboard_missing" does not exist: create it (CREATE DATABASE) or name an existing database in the URL` + "\n"},
		{"unknown role", withUser(t, db, "onboard_nobody", "x"),
			`onboard: storage.postgres_url: PostgreSQL refused the connection: role "onboard_nobody" does not exist` + "\n"},
		{"unreachable", strings.Replace(db, parsed.Host, unreachable, 1),
			"onboard: storage.postgres_url: cannot connect to PostgreSQL at " + unreachable + ": connect: connection refused: check the URL's host and port, and that the server runs\n"},
		{"TLS required of a server without it", withSSLMode("verify-full"),
			"onboard: storage.postgres_url: cannot connect to PostgreSQL: " + parsed.Host + " (127.0.0.1): tls error: server refused TLS connection\n"},
		{"no right to create the tables", withUser(t, empty, plainRole, ""),
			"onboard: storage.postgres_url: the role may not create or change onboard's tables (permission denied for schema public): grant it CREATE on the database and its schema: onboard creates and migrates its tables at start\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, "config", "check", "--config", postgresConfig(t, tt.url))
			wantRun(t, r, 1, "", tt.stderr)
			if strings.Contains(r.stderr, "Password-") {
				t.Errorf("stderr shows a password:\n%s", r.stderr)
			}
		})
	}

	t.Run("valid", func(t *testing.T) {
		t.Parallel()
		// The test server trusts the superuser, whatever the password.
		user := parsed.User.Username()
		config := postgresConfig(t, withUser(t, db, user, secret))
		r := runBinary(t, "config", "check", "--config", config)
		wantRun(t, r, 0, r.stdout, "The PostgreSQL database answers, and its schema is up to date.\nConfiguration "+config+" is valid.\n")
		masked := strings.Replace(db, "//"+user+"@", "//"+user+":********@", 1)
		if !strings.Contains(r.stdout, fmt.Sprintf("postgres_url = %q", masked)) || strings.Contains(r.stdout, secret) {
			t.Errorf("config check shows postgres_url other than %q:\n%s", masked, r.stdout)
		}
	})

	t.Run("URL from the environment", func(t *testing.T) {
		t.Parallel()
		config := postgresConfig(t, "")
		r := runBinaryEnv(t, []string{"ONBOARD_POSTGRES_URL=" + db}, "config", "check", "--config", config)
		wantRun(t, r, 0, r.stdout, "The PostgreSQL database answers, and its schema is up to date.\nConfiguration "+config+" is valid.\n")
		r = runBinary(t, "config", "check", "--config", config)
		wantRun(t, r, 1, "", "onboard: invalid configuration "+config+":\n"+
			`storage.backend "postgres" needs storage.postgres_url (or ONBOARD_POSTGRES_URL): the database's URL, such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full`+"\n")
	})
}

// TestRestoreRefusesSharedBackends: restore fills a data directory of the
// embedded store with its files in it, or a PostgreSQL database; it
// refuses the embedded store with files in a bucket, and says what to fix
// of a database it cannot reach, before it reads the archive.
func TestRestoreRefusesSharedBackends(t *testing.T) {
	t.Parallel()
	archive := writeFile(t, "backup.tar.gz", "not read")
	config := writeFile(t, "s3.toml", "[blobs]\nbackend = \"s3\"\ns3_endpoint = \"http://127.0.0.1:1\"\ns3_bucket = \"b\"\n"+
		"s3_access_key_id = \"k\"\ns3_secret_access_key = \"s\"\n")
	r := runBinary(t, "--config", config, "restore", "--in", archive)
	wantRun(t, r, 1, "", `onboard: restore: onboard restore fills a new data directory of the embedded store with its files, or a PostgreSQL database: with storage.backend = "badger", use blobs.backend = "local"`+"\n")
	config = postgresConfig(t, "postgres://onboard@127.0.0.1:1/onboard")
	r = runBinary(t, "--config", config, "restore", "--in", archive)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "onboard: restore: storage.postgres_url: cannot connect to PostgreSQL at 127.0.0.1:1") {
		t.Errorf("restore into an unreachable database: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestConfigCheckS3: config check reaches the bucket as serve does (it
// lists, writes, reads and deletes a probe object) and says what to fix
// when it cannot be used; the secret never shows.
func TestConfigCheckS3(t *testing.T) {
	t.Parallel()
	good := buckettest.Options(t)
	unreachable := freeLoopback(t)
	tests := []struct {
		name   string
		change func(o *bucket.Options)
		stderr string
	}{
		{"missing bucket", func(o *bucket.Options) { o.Bucket = "onboard-no-such-bucket" },
			`onboard: s3: the bucket "onboard-no-such-bucket" does not exist at ` + good.Endpoint + "; onboard does not create buckets\n"},
		{"wrong secret", func(o *bucket.Options) { o.SecretAccessKey = "Wrong-Secret-1" },
			`onboard: s3: wrong credentials: the secret access key is not the one of access key id "` + good.AccessKeyID + `"` + "\n"},
		{"unknown key", func(o *bucket.Options) { o.AccessKeyID = "onboard-nobody" },
			`onboard: s3: wrong credentials: ` + good.Endpoint + ` does not know the access key id "onboard-nobody"` + "\n"},
		{"unreachable", func(o *bucket.Options) { o.Endpoint = "http://" + unreachable },
			"onboard: s3: the endpoint http://" + unreachable + " is unreachable: dial tcp " + unreachable + ": connect: connection refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := good
			tt.change(&o)
			r := runBinary(t, "config", "check", "--config", writeFile(t, "onboard.toml", s3Table(o)))
			wantRun(t, r, 1, "", tt.stderr)
			if strings.Contains(r.stderr, "Wrong-Secret") || strings.Contains(r.stderr, good.SecretAccessKey) {
				t.Errorf("stderr shows the secret:\n%s", r.stderr)
			}
		})
	}
	t.Run("no permission to write", func(t *testing.T) {
		t.Parallel()
		// A read-only gateway over the test bucket (.ci/services): a key
		// that may list and read but not write.
		ep := os.Getenv("ONBOARD_TEST_S3_READONLY_ENDPOINT")
		switch {
		case ep == "" && os.Getenv("CI") == "true":
			t.Fatal("ONBOARD_TEST_S3_READONLY_ENDPOINT is not set: CI must run this test (.ci/services start)")
		case ep == "":
			t.Skip("ONBOARD_TEST_S3_READONLY_ENDPOINT is not set: no read-only gateway over the test bucket")
		}
		o := good
		o.Endpoint = ep
		r := runBinary(t, "config", "check", "--config", writeFile(t, "onboard.toml", s3Table(o)))
		want := fmt.Sprintf("onboard: s3: no permission to write: the key %q may not write under %q in bucket %q (it needs s3:PutObject): ", o.AccessKeyID, o.Prefix, o.Bucket)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, and stderr starting %q", r.code, r.stdout, r.stderr, want)
		}
	})
	t.Run("valid", func(t *testing.T) {
		t.Parallel()
		config := writeFile(t, "onboard.toml", s3Table(good))
		r := runBinary(t, "config", "check", "--config", config)
		wantRun(t, r, 0, r.stdout, `The S3 bucket "`+good.Bucket+`" answers, and the key may list, write, read and delete in it.`+"\nConfiguration "+config+" is valid.\n")
		if !strings.Contains(r.stdout, `s3_secret_access_key = "********"`) || strings.Contains(r.stdout, good.SecretAccessKey) {
			t.Errorf("config check shows the S3 secret:\n%s", r.stdout)
		}
		if keys := buckettest.Keys(t, good); len(keys) != 0 {
			t.Errorf("config check left objects in the bucket: %v", keys)
		}
	})
}

// s3Table is the [blobs] table of the bucket o names, keys included.
func s3Table(o bucket.Options) string {
	return fmt.Sprintf("[blobs]\nbackend = \"s3\"\ns3_endpoint = %q\ns3_bucket = %q\ns3_region = %q\ns3_prefix = %q\ns3_path_style = %v\ns3_access_key_id = %q\ns3_secret_access_key = %q\n",
		o.Endpoint, o.Bucket, o.Region, o.Prefix, o.PathStyle, o.AccessKeyID, o.SecretAccessKey)
}
