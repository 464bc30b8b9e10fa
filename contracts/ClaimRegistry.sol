// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice Identity claims: one claim per (subject, topic), held as the hash of its data. The owner
/// and the issuers it names add claims in batches; a claim already present is skipped (no event,
/// no revert), so a batch racing another writer still lands every claim it can and the receipt's
/// ClaimAdded events say exactly which claims this transaction added (docs/identity-claims.md).
contract ClaimRegistry {
    /// @dev Fixed: the flows and the Ledger Index decode it.
    event ClaimAdded(address indexed subject, uint256 indexed topic, bytes32 dataHash);
    event IssuerSet(address indexed issuer, bool allowed);

    /// @notice Set once in the constructor. Taken as an argument: with CREATE2 the constructor's
    /// msg.sender is the deployer contract, not the account that asked for the deployment.
    address public immutable owner;
    mapping(address => bool) public isIssuer;
    mapping(address => mapping(uint256 => bytes32)) private claims;

    error NotOwner(address caller);
    error NotIssuer(address caller);
    error ZeroOwner();
    error LengthMismatch(uint256 subjects, uint256 topics, uint256 dataHashes);
    error ZeroSubject(uint256 index);
    error EmptyDataHash(uint256 index);

    constructor(address owner_) {
        if (owner_ == address(0)) revert ZeroOwner();
        owner = owner_;
    }

    /// @notice Allows or stops `issuer` adding claims. Owner only.
    function setIssuer(address issuer, bool allowed) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        isIssuer[issuer] = allowed;
        emit IssuerSet(issuer, allowed);
    }

    /// @notice True when `account` may add claims: the owner or an allowed issuer.
    function canIssue(address account) public view returns (bool) {
        return account == owner || isIssuer[account];
    }

    /// @notice Adds every claim not yet present; present ones are skipped, whatever their data.
    /// @return added How many claims this call added (one ClaimAdded each).
    function addClaims(address[] calldata subjects, uint256[] calldata topics, bytes32[] calldata dataHashes)
        external
        returns (uint256 added)
    {
        if (!canIssue(msg.sender)) revert NotIssuer(msg.sender);
        if (subjects.length != topics.length || subjects.length != dataHashes.length) {
            revert LengthMismatch(subjects.length, topics.length, dataHashes.length);
        }
        for (uint256 i = 0; i < subjects.length; i++) {
            if (subjects[i] == address(0)) revert ZeroSubject(i);
            // A zero hash would read back as "no claim".
            if (dataHashes[i] == bytes32(0)) revert EmptyDataHash(i);
            if (claims[subjects[i]][topics[i]] != bytes32(0)) continue;
            claims[subjects[i]][topics[i]] = dataHashes[i];
            emit ClaimAdded(subjects[i], topics[i], dataHashes[i]);
            added++;
        }
    }

    function hasClaim(address subject, uint256 topic) external view returns (bool) {
        return claims[subject][topic] != bytes32(0);
    }

    /// @notice The claim's data hash; zero when there is no claim.
    function claimHash(address subject, uint256 topic) external view returns (bytes32) {
        return claims[subject][topic];
    }

    /// @notice `claimHash` for many claims in one call (zero where absent): how a batch reads
    /// which of its claims are already on chain.
    function claimHashes(address[] calldata subjects, uint256[] calldata topics)
        external
        view
        returns (bytes32[] memory hashes)
    {
        if (subjects.length != topics.length) revert LengthMismatch(subjects.length, topics.length, 0);
        hashes = new bytes32[](subjects.length);
        for (uint256 i = 0; i < subjects.length; i++) {
            hashes[i] = claims[subjects[i]][topics[i]];
        }
    }
}
