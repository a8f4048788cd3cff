// Command ferretdb runs FerretDB 1.x on SQLite for the embedded default and
// the test bed. It exists because `go install` of FerretDB's own command
// panics on a version file that only its release build generates; the
// embeddable package needs no such file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "./data", "directory holding one SQLite file per database")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	tiedToStdin := flag.Bool("stdin-lifeline", false,
		"exit when standard input closes, so a parent that dies without cleaning up (even by SIGKILL) takes this process with it")
	flag.Parse()

	if err := run(*listen, *dir, *logLevel, *tiedToStdin); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, dir, logLevel string, tiedToStdin bool) error {
	// FerretDB decodes every document it reads into short-lived Go values, and with Go's default (GOGC=100) its
	// collector took a quarter of its CPU on a read of 20,000 documents. Four times the live heap between
	// collections halves the time of such reads; the limit keeps a large read from growing the process without
	// bound (the collector works harder as it nears it). GOGC and GOMEMLIMIT in the environment still win.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("bad -log-level %q", logLevel)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}

	// FerretDB itself listens on a private Unix socket; clients reach it through the serializing proxy (serialize.go).
	socketDir, err := os.MkdirTemp("", "ferretdb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(socketDir)
	socket := filepath.Join(socketDir, "ferretdb.sock")

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{Unix: socket},
		Logger:   logger,
		Handler:  "sqlite",
		// The SQLite handler wants a directory URI with a trailing slash.
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		return err
	}

	// Run returns once the context is cancelled and connections and the
	// backend are closed, so SIGTERM/SIGINT lead to a clean exit 0.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if tiedToStdin {
		ctx = cancelOnStdinEOF(ctx)
	}

	runDone := make(chan error, 1)
	go func() { runDone <- f.Run(ctx) }()

	// Listen only once FerretDB answers on its socket: a client that can connect can also be served.
	if err := waitForSocket(ctx, socket, runDone); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	proxy := &serializer{backend: socket, logger: logger}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	proxyDone := make(chan error, 1)
	go func() { proxyDone <- proxy.serve(ln) }()

	runErr := <-runDone
	if err := <-proxyDone; err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// cancelOnStdinEOF returns a context cancelled once standard input reaches
// end of file or fails: the kernel closes the parent's end of the pipe
// however the parent ends.
func cancelOnStdinEOF(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		defer cancel()
		_, _ = io.Copy(io.Discard, os.Stdin)
	}()
	return ctx
}

// waitForSocket returns once FerretDB accepts connections on its Unix socket, or with its start error.
func waitForSocket(ctx context.Context, socket string, runDone <-chan error) error {
	for {
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			return nil
		}
		select {
		case err := <-runDone:
			if err == nil {
				err = errors.New("FerretDB stopped before it was ready")
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
