package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fileSizeEnv makes the test binary, run as leaselab, unable to grow any file past that many
// bytes: the kernel refuses the write as a full disk would.
const fileSizeEnv = "LEASELAB_TEST_FILE_SIZE_LIMIT"

func init() {
	n, err := strconv.ParseUint(os.Getenv(fileSizeEnv), 10, 64)
	if err != nil {
		return
	}
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails instead of killing the process
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: ^uint64(0)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// TestFullDisk: when the database cannot grow, every write fails with a 5xx, /readyz says the
// store cannot write, and the log folds the failures instead of a line per request. Once there
// is room again, writes work, and the first that succeeds makes /readyz green.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Fatal("prlimit (util-linux) is needed to give the server room again")
	}
	var logs syncBuffer
	cmd, url := startChildWith(t, filepath.Join(t.TempDir(), "full.db"), []string{fileSizeEnv + "=2000000"}, &logs)

	create := func(i, size int) int {
		body := fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l-%d","annotations":{"note":%q}}}`, i, strings.Repeat("x", size))
		resp, err := http.Post(url+"/apis/coordination.k8s.io/v1/namespaces/default/leases", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// Large writes fill the files; small ones then use what room is left.
	i := 0
	for ; i < 100 && create(i, 200_000) == http.StatusCreated; i++ {
	}
	for ; i < 10_000 && create(i, 100) == http.StatusCreated; i++ {
	}
	if i == 10_000 {
		t.Fatal("10,000 writes fitted under a 2 MB file limit")
	}
	for j := range 200 {
		if code := create(20_000+j, 100); code < 500 {
			t.Fatalf("write %d on a full disk: %d, want a 5xx", j, code)
		}
	}
	resp, err := http.Get(url + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), "[-]store") {
		t.Errorf("readyz on a full disk: %d %q; want 500 with the store check failed", resp.StatusCode, b)
	}
	if n := strings.Count(logs.String(), "\n"); n > 20 {
		t.Errorf("%d log lines for 200 failed writes; want them folded:\n%s", n, logs.String())
	}

	if out, err := exec.Command("prlimit", "--pid", strconv.Itoa(cmd.Process.Pid), "--fsize=unlimited:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v %s", err, out)
	}
	// Room again: the next write succeeds, and with it the store is ready again.
	if code := create(30_000, 100); code != http.StatusCreated {
		t.Fatalf("a write once there is room: %d", code)
	}
	resp, err = http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("readyz after a write succeeded again: %d", resp.StatusCode)
	}
}
