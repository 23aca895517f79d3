package ws

import (
	"errors"
	"net"

	"github.com/fasthttp/websocket"
)

// Close codes the server sends (the table in doc.go).
const (
	CloseNormal        = websocket.CloseNormalClosure   // 1000
	CloseGoingAway     = websocket.CloseGoingAway       // 1001: server shutdown
	ClosePolicy        = websocket.ClosePolicyViolation // 1008: too many malformed frames
	CloseTooBig        = websocket.CloseMessageTooBig   // 1009: client frame over MaxMessageSize
	CloseStreamStopped = 4001                           // every followed stream was stopped
	CloseSlowConsumer  = 4008                           // too far behind, or writes time out
	CloseTokenExpired  = 4401                           // the browser token the connection opened with expired or was revoked
)

// Close reasons. Every closed connection records one (logged at debug).
var (
	ErrShutdown         = errors.New("ws: server shutdown")
	ErrStreamStopped    = errors.New("ws: stream stopped")
	ErrTokenExpired     = errors.New("ws: token expired")
	ErrTokenRevoked     = errors.New("ws: token revoked")
	ErrSlowConsumer     = errors.New("ws: slow consumer")
	ErrSlowWrite        = errors.New("ws: slow consumer: write deadline")
	ErrQueueOverflow    = errors.New("ws: slow consumer: send queue over limit")
	ErrTooManyInvalid   = errors.New("ws: too many malformed frames")
	ErrMessageTooBig    = errors.New("ws: client message too big")
	ErrClientClosed     = errors.New("ws: closed by client")
	ErrReadTimeout      = errors.New("ws: read timeout")
	ErrConnectionBroken = errors.New("ws: connection broken")
)

// closeFrame is the one mapping from a close reason to the close code
// and text sent to the client. send is false when the socket is broken or
// stuck, or the close frame went out already; flush says whether the
// frames still queued are written before the close frame.
func closeFrame(err error) (code int, text string, send, flush bool) {
	switch {
	case errors.Is(err, ErrShutdown):
		return CloseGoingAway, "server shutdown", true, true
	case errors.Is(err, ErrStreamStopped):
		return CloseStreamStopped, "stream stopped", true, true
	case errors.Is(err, ErrTokenExpired):
		return CloseTokenExpired, "token expired", true, false
	case errors.Is(err, ErrTokenRevoked):
		return CloseTokenExpired, "token revoked", true, false
	case errors.Is(err, ErrTooManyInvalid):
		return ClosePolicy, "too many malformed frames", true, true
	case errors.Is(err, ErrSlowConsumer), errors.Is(err, ErrQueueOverflow):
		return CloseSlowConsumer, "slow consumer", true, false
	case errors.Is(err, ErrSlowWrite):
		// the socket is stuck (or a frame is half written): a close frame
		// would not get through
		return CloseSlowConsumer, "slow consumer", false, false
	case errors.Is(err, ErrMessageTooBig):
		// gorilla sent 1009 when it read the frame header
		return CloseTooBig, "message too big", false, false
	case errors.Is(err, ErrReadTimeout):
		return ClosePolicy, "read timeout", true, false
	case errors.Is(err, ErrClientClosed), errors.Is(err, ErrConnectionBroken):
		// the client's close was answered by the reader
		return CloseNormal, "", false, false
	default:
		return CloseNormal, "", true, true
	}
}

// readError classifies an error of the read loop as a close reason.
func readError(err error) error {
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		return ErrClientClosed
	case errors.Is(err, websocket.ErrReadLimit):
		return ErrMessageTooBig
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrReadTimeout
	}
	return errors.Join(ErrConnectionBroken, err)
}
