package ws_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/delivery/ws"
)

func TestFileAcksSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acks")
	ctx := context.Background()
	a, err := ws.OpenFileAcks(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Ack(ctx, "key_1", "str_1", ws.Position{Offset: 41, Epoch: "e1"})
	a.Ack(ctx, "key_1", "str_1", ws.Position{Offset: 40, Epoch: "e1"}) // lower: kept 41
	a.Ack(ctx, "key_2", "str_1", ws.Position{Offset: 7, Epoch: "e1"})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := ws.OpenFileAcks(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if p, ok, _ := b.Acked(ctx, "key_1", "str_1"); !ok || p.Offset != 41 || p.Epoch != "e1" {
		t.Errorf("key_1 after reopen: %+v %v, want 41 of e1", p, ok)
	}
	if p, ok, _ := b.Acked(ctx, "key_2", "str_1"); !ok || p.Offset != 7 {
		t.Errorf("key_2 after reopen: %+v %v", p, ok)
	}
	if _, ok, _ := b.Acked(ctx, "key_3", "str_1"); ok {
		t.Error("an ack nobody made")
	}
}
