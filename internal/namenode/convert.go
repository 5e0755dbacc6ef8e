package namenode

import (
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// emptyToken is the block access token of a cluster without block tokens: every
// required field present, all empty.
func emptyToken() *common.TokenProto {
	return &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
}

func datanodeIDProto(id blockmgmt.DatanodeID) *hdfs.DatanodeIDProto {
	return &hdfs.DatanodeIDProto{
		IpAddr:       proto.String(id.IPAddr),
		HostName:     proto.String(id.Hostname),
		DatanodeUuid: proto.String(id.UUID),
		XferPort:     proto.Uint32(uint32(id.XferPort)),
		InfoPort:     proto.Uint32(uint32(id.InfoPort)),
		IpcPort:      proto.Uint32(uint32(id.IPCPort)),
	}
}

func datanodeIDFromProto(p *hdfs.DatanodeIDProto) blockmgmt.DatanodeID {
	return blockmgmt.DatanodeID{
		UUID:     p.GetDatanodeUuid(),
		IPAddr:   p.GetIpAddr(),
		Hostname: p.GetHostName(),
		XferPort: int(p.GetXferPort()),
		InfoPort: int(p.GetInfoPort()),
		IPCPort:  int(p.GetIpcPort()),
	}
}

func datanodeInfoProto(d blockmgmt.DatanodeInfo) *hdfs.DatanodeInfoProto {
	loc := d.Location
	if loc == "" {
		loc = blockmgmt.DefaultRack
	}
	lu := uint64(0)
	if !d.LastUpdate.IsZero() {
		lu = uint64(d.LastUpdate.UnixMilli())
	}
	lbr := uint64(0)
	if !d.LastBlockReport.IsZero() {
		lbr = uint64(d.LastBlockReport.UnixMilli())
	}
	return &hdfs.DatanodeInfoProto{
		LastBlockReportTime:      proto.Uint64(lbr),
		LastBlockReportMonotonic: proto.Uint64(lbr),
		NumBlocks:                proto.Uint32(uint32(d.NumBlocks)),
		CacheCapacity:            proto.Uint64(0),
		CacheUsed:                proto.Uint64(0),
		Id:                       datanodeIDProto(d.ID),
		Capacity:                 proto.Uint64(uint64(d.Capacity)),
		DfsUsed:                  proto.Uint64(uint64(d.DfsUsed)),
		Remaining:                proto.Uint64(uint64(d.Remaining)),
		BlockPoolUsed:            proto.Uint64(uint64(d.BlockPoolUsed)),
		LastUpdate:               proto.Uint64(lu),
		LastUpdateMonotonic:      proto.Uint64(lu),
		XceiverCount:             proto.Uint32(uint32(d.Xceivers)),
		Location:                 proto.String(loc),
		NonDfsUsed:               proto.Uint64(uint64(d.NonDfsUsed)),
		AdminState:               hdfs.DatanodeInfoProto_AdminState(d.AdminState).Enum(),
	}
}

func extendedBlock(pool string, b blockmgmt.Block) *hdfs.ExtendedBlockProto {
	return &hdfs.ExtendedBlockProto{
		PoolId:          proto.String(pool),
		BlockId:         proto.Uint64(uint64(b.ID)),
		GenerationStamp: proto.Uint64(uint64(b.GenStamp)),
		NumBytes:        proto.Uint64(uint64(b.NumBytes)),
	}
}

// locatedBlock builds a LocatedBlockProto with every required field.
func locatedBlock(pool string, lb blockmgmt.LocatedBlock, offset int64) *hdfs.LocatedBlockProto {
	p := &hdfs.LocatedBlockProto{
		B:          extendedBlock(pool, lb.Block),
		Offset:     proto.Uint64(uint64(offset)),
		Corrupt:    proto.Bool(lb.Corrupt),
		BlockToken: emptyToken(),
		Locs:       make([]*hdfs.DatanodeInfoProto, 0, len(lb.Locations)),
	}
	for i, d := range lb.Locations {
		p.Locs = append(p.Locs, datanodeInfoProto(d))
		p.IsCached = append(p.IsCached, false)
		typ := hdfs.StorageTypeProto_DISK
		if i < len(lb.StorageTypes) && lb.StorageTypes[i] != 0 {
			typ = hdfs.StorageTypeProto(lb.StorageTypes[i])
		}
		p.StorageTypes = append(p.StorageTypes, typ)
		sid := ""
		if i < len(lb.StorageIDs) {
			sid = lb.StorageIDs[i]
		}
		p.StorageIDs = append(p.StorageIDs, sid)
	}
	return p
}

// targetsBlock is a located block for a new pipeline: the chosen targets
// (infos) and the storage chosen on each (ts, parallel to infos).
func targetsBlock(pool string, b blockmgmt.Block, offset int64, infos []blockmgmt.DatanodeInfo, ts []blockmgmt.Target) *hdfs.LocatedBlockProto {
	lb := blockmgmt.LocatedBlock{Block: b, Locations: infos, UnderConstruction: true}
	for _, t := range ts {
		lb.StorageIDs = append(lb.StorageIDs, t.StorageID)
		lb.StorageTypes = append(lb.StorageTypes, t.StorageType)
	}
	return locatedBlock(pool, lb, offset)
}
