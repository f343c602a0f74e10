//go:build unix

package crashtest

import (
	"net"
	"strconv"
	"testing"
)

// A port FreeAddr hands out is one outgoing connections are never given, so a
// server stopped and started again on it finds it free; no two are the same,
// and each can be listened on.
func TestFreeAddrAvoidsOutgoingConnectionsPorts(t *testing.T) {
	lo, hi := quietPorts()
	if hi <= lo {
		t.Skip("this system does not say which ports outgoing connections take (/proc/sys/net/ipv4/ip_local_port_range): FreeAddr takes the kernel's pick")
	}
	// What an outgoing connection is given lies at or past hi.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if p := c.LocalAddr().(*net.TCPAddr).Port; p < hi {
		t.Fatalf("an outgoing connection was given port %d, inside the range FreeAddr picks from [%d, %d)", p, lo, hi)
	}
	seen := map[string]bool{}
	for range 50 {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		_, ps, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(ps)
		if p < lo || p >= hi {
			t.Fatalf("FreeAddr gave %s, outside [%d, %d): a port outgoing connections may take", addr, lo, hi)
		}
		if seen[addr] {
			t.Fatalf("FreeAddr gave %s twice", addr)
		}
		seen[addr] = true
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on %s, which FreeAddr gave: %v", addr, err)
		}
		l.Close()
	}
}
