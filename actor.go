package paylink

import "context"

// ActorKind says who asked for a change: the audit log records it with
// every security-relevant event.
type ActorKind string

// Actor kinds.
const (
	ActorAPIKey   ActorKind = "api_key"  // a merchant's API key; ID is the key's id
	ActorStaff    ActorKind = "staff"    // a dashboard user; ID is the user's id
	ActorSystem   ActorKind = "system"   // a background job; ID is the job's name
	ActorCLI      ActorKind = "cli"      // an operator at the command line; ID is the command
	ActorCustomer ActorKind = "customer" // a customer on a hosted page; ID is empty
)

// Actor is who is acting in a request or job, where from, and under
// which request id. Adapters put it in the context; the Service reads it
// when it writes audit events, so no method needs an extra parameter.
type Actor struct {
	Kind      ActorKind
	ID        string
	IP        string // source IP address of the request, "" for jobs and the CLI
	RequestID string // the X-Request-Id of the HTTP request, "" outside one
}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor in ctx; without one it is the system.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Kind: ActorSystem}
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the HTTP request id, set by the
// shared middleware before any handler runs.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
