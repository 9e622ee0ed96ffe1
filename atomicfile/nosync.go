package atomicfile

import "os"

// WriteFileNoSync writes data to the file at path, with mode perm, so that
// readers see the old content or the new one whole, never part of it, but
// without fsyncs: a crash may lose the new file or leave it empty. It is for
// files cheap to lose that are written often, where the fsyncs would cost
// every write; WriteFile is the durable one. On Linux a new file is written
// unnamed and then linked at path (writeUnnamed); elsewhere, or where that
// fails, through a temporary file renamed into place (writeRenamed).
func WriteFileNoSync(path string, data []byte, perm os.FileMode) error {
	if err := writeUnnamed(path, data, perm); err != nil {
		return writeRenamed(path, data, perm)
	}
	return nil
}

// writeRenamed writes data to path through a temporary file in the same
// directory: create, write, close, rename, with no fsync. A crash between
// the create and the rename leaves the temporary file, whose name starts
// with a dot.
func writeRenamed(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.commit(false, false)
}
