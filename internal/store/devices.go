package store

import (
	"context"
	"time"
)

// DeviceSettings is the applied settings record of a device. Settings is
// the complete merged settings JSON; Record the full applied answer.
type DeviceSettings struct {
	Org       string
	Env       string
	DeviceID  string
	Settings  []byte
	Record    []byte
	Version   int64
	AppliedAt time.Time
}

// Devices stores device settings.
type Devices interface {
	// PutDeviceSettings stores d with the next version (1 for a new
	// device) if the stored version is still prev (0: none yet);
	// ErrConflict otherwise.
	PutDeviceSettings(ctx context.Context, d DeviceSettings, prev int64) error
	GetDeviceSettings(ctx context.Context, s Scope, deviceID string) (DeviceSettings, error)
}
