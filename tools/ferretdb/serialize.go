package main

// FerretDB 1.x runs an update as "query, then write" with nothing held in between, so two concurrent updates of one
// document can both read the old value: 50 concurrent $inc of one counter end at about 7, and a conditional
// findAndModify can have many winners. MongoDB makes every single-document operation atomic, and the service relies
// on that (idempotency leases, upload locks, job claims, merge counters). To give the embedded default and the test
// bed the same guarantee, the runner puts FerretDB behind this proxy, which passes one command at a time, across
// all connections: each command runs to completion before the next begins.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
)

const (
	opMsg            = 2013
	flagMoreToCome   = 1 << 1
	maxMessageLength = 48 * 1024 * 1024
)

// serializer forwards wire-protocol messages from clients to FerretDB, one request/response exchange at a time.
type serializer struct {
	backend string // FerretDB's Unix socket
	mu      sync.Mutex
	logger  *slog.Logger
}

func (s *serializer) serve(ln net.Listener) error {
	for {
		client, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.handle(client)
	}
}

func (s *serializer) handle(client net.Conn) {
	defer client.Close()
	backend, err := net.Dial("unix", s.backend)
	if err != nil {
		s.logger.Error("backend unreachable", "error", err)
		return
	}
	defer backend.Close()
	for {
		request, err := readMessage(client)
		if err != nil {
			return // client closed or sent garbage: drop the connection, as a server would
		}
		if err := s.exchange(request, backend, client); err != nil {
			return
		}
	}
}

// exchange sends one request and relays its response(s) while holding the lock.
func (s *serializer) exchange(request []byte, backend, client net.Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := backend.Write(request); err != nil {
		return err
	}
	if moreToCome(request) {
		return nil // an unacknowledged request gets no response
	}
	for {
		response, err := readMessage(backend)
		if err != nil {
			return err
		}
		if _, err := client.Write(response); err != nil {
			return err
		}
		if !moreToCome(response) {
			return nil
		}
	}
}

func readMessage(r io.Reader) ([]byte, error) {
	var header [16]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, err
	}
	length := int(binary.LittleEndian.Uint32(header[0:4]))
	if length < 16 || length > maxMessageLength {
		return nil, fmt.Errorf("bad message length %d", length)
	}
	message := make([]byte, length)
	copy(message, header[:])
	if _, err := io.ReadFull(r, message[16:]); err != nil {
		return nil, err
	}
	return message, nil
}

func moreToCome(message []byte) bool {
	if len(message) < 20 || binary.LittleEndian.Uint32(message[12:16]) != opMsg {
		return false
	}
	return binary.LittleEndian.Uint32(message[16:20])&flagMoreToCome != 0
}
