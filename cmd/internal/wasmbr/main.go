// Command wasmbr compresses standard input to standard output with Brotli at its best quality
// and largest window: `make wasm` writes the browser candidate's candidate.wasm.br with it,
// which the server sends to browsers that take br (they all do over HTTPS), a quarter smaller
// than the gzip variant. With -d it decompresses instead: `make wasm` compares the committed
// file's content with a fresh build rather than compressing again (ten seconds) to compare bytes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/andybalholm/brotli"
)

func main() {
	decompress := flag.Bool("d", false, "decompress standard input instead")
	flag.Parse()
	out := bufio.NewWriter(os.Stdout)
	var err error
	if *decompress {
		_, err = io.Copy(out, brotli.NewReader(os.Stdin))
	} else {
		w := brotli.NewWriterOptions(out, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 24})
		_, err = io.Copy(w, os.Stdin)
		if err == nil {
			err = w.Close()
		}
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmbr:", err)
		os.Exit(1)
	}
}
