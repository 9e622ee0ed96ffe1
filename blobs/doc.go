// Package blobs keeps files in a local directory and makes expiring,
// HMAC-signed download links for them.
//
// # Layout
//
// A Store owns one directory (normally {data_dir}/blobs):
//
//	dir/
//	  tmp/                      uploads in progress; leftovers older than an hour are removed by Open
//	  ab/cd/abcd1234-....       one file per blob, named by its id
//
// A blob's id is a random (version 4) UUID in canonical lower-case form; ab
// and cd are its first four hex digits, so no directory holds more than 256
// shard directories. Put writes to a temporary file in tmp/, fsyncs it,
// renames it into its shard and fsyncs the shard directory, so that a blob
// is either absent or complete, also after a crash. A Batch (Store.Batch)
// puts several blobs into one shard (their ids share the first four hex
// digits) and fsyncs that shard once, at Sync, before the record that refers
// to them commits: one directory fsync for an application's registry
// filings rather than one per file. Every id that comes from
// outside is checked to be a canonical lower-case UUID before it is turned
// into a path; anything else is treated as a blob that does not exist, so no
// user input ever reaches the file system.
//
// # Signed links
//
// A Signer makes download paths of the form
//
//	/files/{id}?disposition={attachment|inline}&expires={unix seconds}&filename={name}&signature={sig}&type={content type}
//
// (query keys sorted, values query-escaped), relative to the public URL. The
// signature is HMAC-SHA256, base64url without padding, over the HTTP method,
// the id, the expiry, the disposition, the file name and the content type,
// each length-prefixed so that no two different links share a signed
// message. Verify checks a request against it: a link is valid up to and
// including the second named by expires, and invalid afterwards.
//
// ContentDisposition renders the Content-Disposition header for a verified
// download, and LoadOrCreateKey and DecodeKey provide the signing key.
package blobs
