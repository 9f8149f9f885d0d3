package paylink

import (
	"context"
	"fmt"
	"sync"
)

// background owns the goroutines the Service starts on its own, outside
// any request or job (finishLater): Close stops them and waits for them,
// so that nothing writes to the store once its owner closes it.
type background struct {
	stop   context.Context // done once Close is called
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed and the WaitGroup's Add against Close's Wait
	closed bool
	wg     sync.WaitGroup
}

func newBackground() *background {
	stop, cancel := context.WithCancel(context.Background())
	return &background{stop: stop, cancel: cancel}
}

// start runs fn in a goroutine, passing it the context that is done once
// the Service closes; it reports false, and runs nothing, after Close.
func (b *background) start(fn func(stop context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Go(func() { fn(b.stop) })
	return true
}

// close stops the goroutines and waits until they have returned, or ctx
// is done.
func (b *background) close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close the service: background work still running: %w", ctx.Err())
	}
}

// Close stops the Service's background work (the retried end of an
// Idempotency-Key whose end an outage kept from being written, see
// FinishIdempotent) and waits for it, at most until ctx is done. Its
// owner calls it after the last request and job has returned, and before
// closing the store. A key whose end was still to be written stays
// claimed until its lock (IdempotencyLock) runs out, as after a crash:
// a retry meanwhile is told the key is in progress, then takes it over.
// Close may be called more than once.
func (s *Service) Close(ctx context.Context) error { return s.bg.close(ctx) }
