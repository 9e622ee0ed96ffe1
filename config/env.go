package config

// The environment variables that override settings of the file, so that
// a secret need not be written into it.
const (
	EnvPostgresURL        = "ONBOARD_POSTGRES_URL"  // storage.postgres_url
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"     // blobs.s3_access_key_id
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY" // blobs.s3_secret_access_key
)

// ApplyEnv overrides the settings the environment gives, looked up with
// lookup (os.LookupEnv): ONBOARD_POSTGRES_URL, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY. A variable that is unset or empty overrides
// nothing.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) {
	for _, o := range []struct {
		name string
		key  *string
	}{
		{EnvPostgresURL, &c.Storage.PostgresURL},
		{EnvAWSAccessKeyID, &c.Blobs.S3AccessKeyID},
		{EnvAWSSecretAccessKey, &c.Blobs.S3SecretAccessKey},
	} {
		if v, ok := lookup(o.name); ok && v != "" {
			*o.key = v
		}
	}
}
