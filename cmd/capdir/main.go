// Command capdir is the capability directory and dispatcher: one binary for the
// server (serve) and the tools around it (replay, digest, import, export, invoke,
// breaker, bench).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "capdir:", err)
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "capdir",
		Short:         "capdir: a capability directory and dispatcher over an append-only log",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

// commands is filled by each command's file in init, so commands are added without
// editing this file.
var commands []func() *cobra.Command

func register(c func() *cobra.Command) { commands = append(commands, c) }

// defaultDataDir is $CAPDIR_DATA or ./capdir-data.
func defaultDataDir() string {
	if d := os.Getenv("CAPDIR_DATA"); d != "" {
		return d
	}
	return "capdir-data"
}
