package main

// FerretDB 1.x runs an update as "query, then write" with nothing held in between, so two concurrent updates of one
// document can both read the old value: 50 concurrent $inc of one counter end at about 7, and a conditional
// findAndModify can have many winners. MongoDB makes every single-document operation atomic, and the service relies
// on that (idempotency leases, upload locks, job claims, merge counters). To give the embedded default and the test
// bed the same guarantee, the runner puts FerretDB behind this proxy, which passes one command at a time, across
// all connections: each write command runs to completion before the next write begins. Reads pass freely: a read
// racing a write sees the document before or after it, as on MongoDB; only write-write races lose updates.

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

// exchange sends one request and relays its response(s), holding the lock for writes.
func (s *serializer) exchange(request []byte, backend, client net.Conn) error {
	if isWrite(request) {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
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

// writeCommands change data or schema; everything else (find, aggregate, count, getMore, hello, ...) only reads.
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true,
	"create": true, "createIndexes": true, "drop": true, "dropDatabase": true, "dropIndexes": true,
	"renameCollection": true, "collMod": true,
}

// isWrite reads the command name (the first key of the body section of an OP_MSG). Anything it cannot read is
// treated as a write: serializing too much is safe, too little is not.
func isWrite(message []byte) bool {
	if len(message) < 21 || binary.LittleEndian.Uint32(message[12:16]) != opMsg {
		return true
	}
	// header (16) + flagBits (4); sections follow. Kind 0 is the command body, kind 1 a document sequence.
	for i := 20; i < len(message); {
		kind := message[i]
		i++
		if kind == 1 {
			if i+4 > len(message) {
				return true
			}
			i += int(binary.LittleEndian.Uint32(message[i : i+4]))
			continue
		}
		if kind != 0 || i+5 > len(message) {
			return true
		}
		// BSON document: int32 length, then elements: type byte, cstring name, value. The first name is the command.
		start := i + 5
		end := start
		for end < len(message) && message[end] != 0 {
			end++
		}
		if end >= len(message) {
			return true
		}
		return writeCommands[string(message[start:end])]
	}
	return true
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
