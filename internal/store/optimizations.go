package store

import (
	"context"
	"time"
)

// Optimization is a stored route optimization; Doc is its JSON.
type Optimization struct {
	ID        string
	Org       string
	Env       string
	Status    string
	Doc       []byte
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Optimizations stores route optimizations.
type Optimizations interface {
	CreateOptimization(ctx context.Context, o Optimization) error
	GetOptimization(ctx context.Context, s Scope, id string) (Optimization, error)
	// UpdateOptimization writes o if the stored version is still prev.
	UpdateOptimization(ctx context.Context, o Optimization, prev int64) error
}
