package api

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter is a token bucket per merchant. Limits are per instance: with
// N instances behind a balancer a merchant may reach N times the rate.
type limiter struct {
	mu     sync.Mutex
	every  rate.Limit
	burst  int
	byName map[string]*rate.Limiter
}

func newLimiter(perSecond float64, burst int) *limiter {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &limiter{every: rate.Limit(perSecond), burst: burst, byName: map[string]*rate.Limiter{}}
}

// allow takes a token for name, or says how long until one is free. A nil
// limiter allows everything.
func (l *limiter) allow(name string) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	l.mu.Lock()
	lim, ok := l.byName[name]
	if !ok {
		lim = rate.NewLimiter(l.every, l.burst)
		l.byName[name] = lim
	}
	l.mu.Unlock()
	res := lim.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return d, false
	}
	return 0, true
}
