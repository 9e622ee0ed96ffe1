// Package bucket keeps blobs in an S3-compatible object store (AWS S3,
// MinIO, Ceph RGW, Garage, versitygw …), with the contract of the local
// store of package blobs: the same ids, sizes bounded while streaming, a
// blob either absent or complete, ranged reads, idempotent deletes and a
// walk for the orphan sweep.
//
// # Layout
//
// Blob id is the object prefix+id of one bucket (Options.Prefix, "" or
// ending in "/"); ids are random version 4 UUIDs (blobs.ValidID), which
// spread over the key space without sharding. Anything else in the bucket,
// including keys deeper under the prefix, is not a blob and is left
// alone. The bucket stays private: downloads go through onboard's signed
// links, which read the object with the store's key.
//
// # Atomicity
//
// S3 makes an object visible only when the request that writes it
// succeeds. Put sends content of up to one part (5 MiB) in one PutObject;
// longer content goes in a multipart upload, one part at a time as it is
// read, so that no more than a part is held in memory, and the upload is
// completed only after the last part: content over the limit, a failed
// read, a cancelled context or a failed request abort it. The parts of an
// upload that a crash interrupts are invisible and are aborted by a later
// Walk once an hour old.
//
// # Reads
//
// Open sends one GET of the whole object; its answer gives the size and
// time and serves reads in order. Reading elsewhere (Seek, or ReadAt at
// another offset) sends a ranged GET from there to the end, so that
// http.ServeContent serves a Range request with one ranged GET and a
// sequential scan through ReadAt costs one request.
package bucket
