// Command capdir is the capability directory and dispatcher: one binary for the
// server (serve) and the tools around it (replay, digest, import, export, invoke,
// breaker, bench).
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/editdist"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	root := rootCmd()
	guardTerminal(root, os.Stdout, os.Stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(root.ErrOrStderr(), "capdir:", withHowToFix(err))
		os.Exit(1)
	}
}

// withHowToFix is err's message, followed by what to do about it where err alone
// does not say: a data dir another capdir holds is freed by stopping that process.
func withHowToFix(err error) string {
	var inUse *capdir.DataDirInUseError
	if errors.As(err, &inUse) {
		stop := "stop that capdir first (Ctrl-C where it runs"
		if inUse.PID != 0 {
			stop += fmt.Sprintf(", or kill -INT %d", inUse.PID)
		}
		return fmt.Sprintf("%v; %s), or give this command another --data", err, stop)
	}
	return err.Error()
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "capdir",
		Short:         "capdir: a capability directory and dispatcher over an append-only log",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("capdir {{.Version}}\n")
	root.SetFlagErrorFunc(suggestFlag)
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

// suggestFlag adds to an unknown flag's error the command's flag nearest to it,
// and where the command's flags are listed.
func suggestFlag(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	best, bestD := "", 3
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if d := editdist.Bounded(name, f.Name, 2); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best != "" {
		return fmt.Errorf("%w; did you mean --%s? (%s --help lists its flags)", err, best, c.CommandPath())
	}
	return fmt.Errorf("%w (%s --help lists its flags)", err, c.CommandPath())
}

// commands is filled by each command's file in init, so commands are added without
// editing this file.
var commands []func() *cobra.Command

func register(c func() *cobra.Command) { commands = append(commands, c) }

// defaultDataDir is $CAPDIR_DATA or ./capdir-data.
func defaultDataDir() string {
	if d := os.Getenv(dataDirEnv); d != "" {
		return d
	}
	return "capdir-data"
}
