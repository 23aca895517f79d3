package webhook

// DeliveryID is deliveryID for the external tests.
var DeliveryID = deliveryID
