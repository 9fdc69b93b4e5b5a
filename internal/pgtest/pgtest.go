// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb
// into a temporary directory, pg_ctl start on a free loopback port, stop
// and remove when the test ends. Nothing depends on a server started by
// hand.
//
// The binaries are found with `pg_config --bindir`, else under
// /usr/lib/postgresql/<version>/bin (Debian's layout, newest version
// first). Without them a test is skipped, unless PDP_REQUIRE_POSTGRES=1
// (CI), where it fails. PostgreSQL refuses to run as root, so as root the
// cluster is created and run as the `postgres` user.
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing PostgreSQL
// from a skip into a failure.
const RequireEnv = "PDP_REQUIRE_POSTGRES"

// Start starts a new, empty cluster for t and returns the URL of its
// `postgres` database as the superuser `postgres` (trust authentication
// on 127.0.0.1 only). Settings are extra server settings, "name=value"
// each (e.g. "max_connections=200"). The cluster is stopped and its files
// removed in t.Cleanup.
func Start(t testing.TB, settings ...string) string {
	t.Helper()
	return StartCluster(t, settings...).URL
}

// Cluster is a running throwaway cluster a test can stop and start again
// on the same port, to see what an outage of the database does.
type Cluster struct {
	// URL is the `postgres` database as the superuser, as Start returns.
	URL      string
	c        *cluster
	port     int
	settings []string
	stopped  bool
}

// StartCluster is Start, returning the cluster itself.
func StartCluster(t testing.TB, settings ...string) *Cluster {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		unavailable(t, err)
	}
	owner, err := clusterOwner()
	if err != nil {
		unavailable(t, err)
	}
	base, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if owner != nil {
		if err := os.Chown(base, owner.Uid, owner.Gid); err != nil {
			t.Fatalf("pgtest: giving %s to the postgres user: %v", base, err)
		}
	}
	c := &cluster{bin: bin, base: base, data: filepath.Join(base, "data"), owner: owner}
	if out, err := c.run("initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	// A free port may be taken between our probe and the server's bind:
	// try a few.
	var port int
	for attempt := 0; ; attempt++ {
		port, err = freePort()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.start(port, settings)
		if err == nil {
			break
		}
		if attempt == 2 {
			t.Fatalf("pgtest: pg_ctl start: %v\n%s\nserver log:\n%s", err, out, c.log())
		}
	}
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	cl := &Cluster{URL: u.String(), c: c, port: port, settings: settings}
	t.Cleanup(func() {
		if cl.stopped {
			return
		}
		if out, err := c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop"); err != nil {
			t.Errorf("pgtest: pg_ctl stop: %v\n%s", err, out)
		}
	})
	return cl
}

// Stop stops the server at once (pg_ctl stop -m immediate), dropping
// every connection, as a crash or a network cut would.
func (cl *Cluster) Stop(t testing.TB) {
	t.Helper()
	if out, err := cl.c.run("pg_ctl", "-D", cl.c.data, "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
	cl.stopped = true
}

// Restart starts a stopped server again on the same port and data.
func (cl *Cluster) Restart(t testing.TB) {
	t.Helper()
	if out, err := cl.c.start(cl.port, cl.settings); err != nil {
		t.Fatalf("pgtest: pg_ctl start: %v\n%s\nserver log:\n%s", err, out, cl.c.log())
	}
	cl.stopped = false
}

// BinDir returns the directory of PostgreSQL's server binaries (initdb,
// pg_ctl, postgres), or an error saying none was found.
func BinDir() (string, error) {
	var candidates []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	candidates = append(candidates, found...)
	for _, dir := range candidates {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "pg_ctl")) {
			return dir, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl): neither `pg_config --bindir` nor /usr/lib/postgresql/*/bin has them; install PostgreSQL (apt-get install postgresql)")
}

// version is the major version in a /usr/lib/postgresql/<v>/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// unavailable skips t, or fails it when PostgreSQL is required.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("pgtest: %v (%s=1: PostgreSQL is required)", err, RequireEnv)
	}
	t.Skipf("pgtest: %v; skipping (set %s=1 to fail instead)", err, RequireEnv)
}

// owner is the user a cluster runs as when it cannot run as us.
type owner struct{ Uid, Gid int }

// clusterOwner is nil when we may run the cluster ourselves, else the
// postgres user (PostgreSQL will not run as root).
func clusterOwner() (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and no postgres user to run the cluster as: %w", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("postgres user's uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("postgres user's gid %q: %w", u.Gid, err)
	}
	return &owner{Uid: uid, Gid: gid}, nil
}

// cluster is one throwaway cluster: its binaries, its directories and
// the user it runs as (nil: us).
type cluster struct {
	bin, base, data string
	owner           *owner
}

// start runs pg_ctl start on port, listening on 127.0.0.1 only, with the
// socket in the cluster's own directory (not /var/run/postgresql, which
// may not exist or be writable).
func (c *cluster) start(port int, settings []string) ([]byte, error) {
	opts := []string{"-c listen_addresses=127.0.0.1", "-p " + strconv.Itoa(port), "-c unix_socket_directories=" + c.base}
	for _, s := range settings {
		opts = append(opts, "-c "+s)
	}
	return c.run("pg_ctl", "-D", c.data, "-l", filepath.Join(c.base, "server.log"), "-w", "-t", "60",
		"-o", strings.Join(opts, " "), "start")
}

// run runs one of the cluster's binaries as its owner.
func (c *cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.base
	cmd.Env = append(os.Environ(), "TZ=UTC")
	if c.owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(c.owner.Uid), Gid: uint32(c.owner.Gid)}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl start leaves the server running with our output pipe open
	// unless it logs elsewhere (-l); bound the wait all the same.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// log is the server's log, for a failure message.
func (c *cluster) log() string {
	b, err := os.ReadFile(filepath.Join(c.base, "server.log"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Pause stops every process of the cluster with SIGSTOP — the postmaster
// and each backend — as a stalled host or a partition without a reset
// would: connections stay open and nothing answers. Resume ends it.
func (cl *Cluster) Pause(t testing.TB) {
	t.Helper()
	cl.signal(t, syscall.SIGSTOP)
	t.Cleanup(func() { cl.signalAll(syscall.SIGCONT) })
}

// Resume lets the paused cluster run again (SIGCONT).
func (cl *Cluster) Resume(t testing.TB) {
	t.Helper()
	cl.signal(t, syscall.SIGCONT)
}

func (cl *Cluster) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if n := cl.signalAll(sig); n == 0 {
		t.Fatalf("pgtest: no process of the cluster to send %v", sig)
	}
}

// signalAll sends sig to the postmaster (postmaster.pid's first line)
// and its children; it returns how many processes it reached.
func (cl *Cluster) signalAll(sig syscall.Signal) int {
	raw, err := os.ReadFile(filepath.Join(cl.c.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0
	}
	pids := []int{pm}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: the command may hold spaces, so read
		// after its closing parenthesis.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) > 1 && fields[1] == strconv.Itoa(pm) {
			pids = append(pids, pid)
		}
	}
	n := 0
	for _, pid := range pids {
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}
