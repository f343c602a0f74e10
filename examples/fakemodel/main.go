// Command fakemodel is an OpenAI-compatible model server that answers without a
// model, to try agent rows with nothing to sign up for and nothing leaving the
// machine. It answers POST <base>/chat/completions (any base path; /v1 by habit)
// the same way every time:
//
//   - offered tools and no tool result yet, it calls one tool: the first whose name
//     the user message holds (in any case), else the first offered, with the user
//     message as its arguments (as "args", or as the object itself when the message
//     is a JSON object and the tool takes a schema);
//   - given a tool's result, it answers "<TOOL> says: <result>";
//   - offered no tools, it answers "<model> heard: <user message>".
//
// Usage counts a token per four bytes of the messages and of the answer, so an
// agent row's cost can be tried too (capdir serve --agent-price). It listens on
// -addr (default 127.0.0.1:9099) until SIGINT or SIGTERM, and keeps every request
// it answered in memory: it is for trying, not for load.
//
//	go run ./examples/fakemodel -addr 127.0.0.1:9099
//	capdir serve --agent-provider fake:=http://127.0.0.1:9099/v1
//
// A row with target fake:demo then sends its calls here (docs/agents.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9099", "host:port to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w; stop what listens there or give another address with -addr HOST:PORT", addr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := agenttest.StartOn(l, reply)
	fmt.Printf("fakemodel serving %s/v1 (POST /v1/chat/completions); stop it with Ctrl-C\n", srv.URL)
	<-ctx.Done()
	srv.Close()
	return nil
}
