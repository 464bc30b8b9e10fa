// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IERC20TransferFrom {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @notice Pays a corporate action's entitlements in batches. Each batch moves the payment token
/// from the owner (the paying wallet, which approves this contract) to the holders, and is
/// recorded under its id so a batch can never be paid twice, whatever the caller retries.
/// The owner is a constructor argument: under CREATE2 msg.sender is the deployer contract.
contract Distributor {
    address public immutable owner;

    /// Batch ids already paid.
    mapping(bytes32 => bool) public paid;

    event BatchPaid(bytes32 indexed batchId, address indexed token, uint256 count, uint256 total);

    error NotOwner();
    error BatchAlreadyPaid(bytes32 batchId);
    error LengthMismatch(uint256 holders, uint256 amounts);
    error TransferFailed(address holder, uint256 amount);

    constructor(address owner_) {
        owner = owner_;
    }

    function distribute(bytes32 batchId, address token, address[] calldata holders, uint256[] calldata amounts)
        external
    {
        if (msg.sender != owner) revert NotOwner();
        if (paid[batchId]) revert BatchAlreadyPaid(batchId);
        if (holders.length != amounts.length) revert LengthMismatch(holders.length, amounts.length);
        paid[batchId] = true;
        uint256 total = 0;
        for (uint256 i = 0; i < holders.length; i++) {
            total += amounts[i];
            if (!IERC20TransferFrom(token).transferFrom(msg.sender, holders[i], amounts[i])) {
                revert TransferFailed(holders[i], amounts[i]);
            }
        }
        emit BatchPaid(batchId, token, holders.length, total);
    }
}
