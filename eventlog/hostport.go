package eventlog

import (
	"fmt"
	"net"
	"strconv"

	"github.com/nats-io/nats-server/v2/server"
)

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("eventlog: --nats-listen must be host:port, got %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("eventlog: --nats-listen port must be 0..65535 (0: any free port), got %q", p)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if port == 0 {
		port = server.RANDOM_PORT // the NATS server reads 0 as its default port, 4222
	}
	return host, port, nil
}
