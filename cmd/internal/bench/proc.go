package bench

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// localServerPID finds the process listening on a loopback server's port through /proc. It
// reports false for remote servers or where /proc is missing.
func localServerPID(host string) (string, bool) {
	u, err := url.Parse(host)
	if err != nil {
		return "", false
	}
	h, p := u.Hostname(), u.Port()
	if ip := net.ParseIP(h); !(h == "localhost" || ip != nil && ip.IsLoopback()) || p == "" {
		return "", false
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", false
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			// local_address is HEXIP:HEXPORT; state 0A is LISTEN.
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if n, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(n) == port {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return "", false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		target, err := os.Readlink(fd)
		if err == nil && inodes[target] {
			return strings.Split(fd, "/")[2], true
		}
	}
	return "", false
}

// processRSS returns the resident memory of a process and its peak, from /proc/PID/status.
func processRSS(pid string) (rss, peak int64) {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, 0
	}
	kb := func(v string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		return n << 10
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kb(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peak = kb(v)
		}
	}
	return rss, peak
}

// processCPU returns the user and system CPU time a process ("self" for this one) has used,
// from /proc/PID/stat.
func processCPU(pid string) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields are counted after it.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0, false
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// Clock ticks: USER_HZ is 100 on every Linux architecture Go supports.
	return time.Duration(utime+stime) * (time.Second / 100), true
}
